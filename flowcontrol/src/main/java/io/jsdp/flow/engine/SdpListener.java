package io.jsdp.flow.engine;

import static io.jsdp.flow.engine.SdpStack.TRACE;

import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An SDP listener: a connection-manager id listening on an address. Each connect request gets a
 * connection of its own (queue pair, buffers, accept); it is handed to {@link #accept()} once its Hello
 * has arrived and the HelloAck is on its way, i.e. once it is established — as TCP's accept queue holds
 * connections whose three-way handshake finished. Requests beyond the backlog are refused.
 */
public final class SdpListener implements AutoCloseable, SdpStack.CmHandler {
    private final SdpStack stack;
    private final CmId id;
    private final int backlog;
    private final SdpOptions options;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition();
    /** Guarded by lock. */
    private final ArrayDeque<SdpConnection> established = new ArrayDeque<>();
    /** Guarded by lock: connections between CONNECT_REQUEST and the end of their handshake. */
    private final Set<SdpConnection> handshaking = new HashSet<>();
    private boolean closed;
    private volatile Runnable acceptListener;

    SdpListener(SdpStack stack, CmId id, InetSocketAddress local, int backlog, SdpOptions options) throws VerbsException {
        this.stack = stack;
        this.id = id;
        this.backlog = backlog;
        this.options = options;
        id.bind(local);
        id.listen(backlog);
        stack.register(id, this);
        TRACE.message(TraceLevel.RARE, "listener.open", "SDP listener on " + id.localAddress());
    }

    @Override
    public void onCmEvent(CmEvent e) {
        if (e.type() != CmEventType.CONNECT_REQUEST) {
            return;
        }
        CmId request = e.id();
        lock.lock();
        try {
            if (closed) {
                rejectQuietly(request, null);
                return;
            }
            if (established.size() + handshaking.size() >= backlog) {
                refuse(request, RejectReason.BACKLOG);
                return;
            }
        } finally {
            lock.unlock();
        }
        ConnectionLimits limits = stack.limits();
        ConnectionLimits.Cap cap = limits.admit();
        if (cap != null) {
            refuse(request, RejectReason.of(cap));
            return;
        }
        SdpConnection c;
        try {
            c = new SdpConnection(stack, request, false, options);
        } catch (VerbsException | RuntimeException ex) {
            limits.handshakeEnded();
            limits.released();
            TRACE.record(TraceLevel.ERROR, "listener.connectionFailed", ex);
            boolean noMemory = ex instanceof VerbsException v && v.errno() == io.jsdp.verbs.Errno.ENOMEM;
            if (noMemory) {
                limits.requestRefused();
            }
            rejectQuietly(request, noMemory ? RejectReason.RESOURCES : null);
            return;
        }
        c.holdAdmission();
        lock.lock();
        try {
            handshaking.add(c);
        } finally {
            lock.unlock();
        }
        c.startAccept(this);
    }

    /** Rejects a request this listener cannot take now, saying why, and counts it. */
    private void refuse(CmId request, RejectReason why) {
        stack.limits().requestRefused();
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, "listener.refused", why.ordinal());
        }
        rejectQuietly(request, why);
    }

    private static void rejectQuietly(CmId request, RejectReason why) {
        try {
            request.reject(why == null ? null : why.privateData());
        } catch (VerbsException ex) {
            // the request is gone already
        }
        request.close();
    }

    /** A connection's handshake ended: queue it when established, forget it when it failed. */
    void onHandshakeDone(SdpConnection c) {
        boolean queued = false;
        lock.lock();
        try {
            if (!handshaking.remove(c)) {
                return;
            }
            if (!closed && c.state() == SdpConnection.State.ESTABLISHED) {
                established.add(c);
                ready.signalAll();
                queued = true;
            }
        } finally {
            lock.unlock();
        }
        if (!queued) {
            c.abort();
            return;
        }
        Runnable l = acceptListener;
        if (l != null) {
            l.run();
        }
    }

    /**
     * Takes an established connection, without waiting.
     *
     * @return the connection, or null when none is waiting
     */
    public SdpConnection accept() {
        lock.lock();
        try {
            return established.poll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes an established connection, waiting up to {@code timeoutNs}.
     *
     * @param timeoutNs the longest wait
     * @return the connection, or null when none came in time or the listener closed
     * @throws InterruptedException when interrupted
     */
    public SdpConnection accept(long timeoutNs) throws InterruptedException {
        long left = timeoutNs;
        lock.lock();
        try {
            while (established.isEmpty() && !closed && left > 0) {
                left = ready.awaitNanos(left);
            }
            return established.poll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sets a callback run (on a stack thread, no lock held) when a connection becomes acceptable.
     *
     * @param l the callback, or null
     */
    public void acceptListener(Runnable l) {
        this.acceptListener = l;
    }

    /**
     * Whether a connection is waiting to be accepted.
     *
     * @return true when {@link #accept()} would return one
     */
    public boolean isAcceptable() {
        lock.lock();
        try {
            return !established.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The bound address.
     *
     * @return the address, with the port chosen when 0 was asked
     */
    public InetSocketAddress localAddress() {
        return id.localAddress();
    }

    /**
     * Stops listening; connections not yet accepted are aborted (their peers see a reset).
     * Idempotent.
     */
    @Override
    public void close() {
        List<SdpConnection> drop;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            drop = new ArrayList<>(established);
            drop.addAll(handshaking);
            established.clear();
            handshaking.clear();
            ready.signalAll();
        } finally {
            lock.unlock();
        }
        stack.unregister(id);
        id.close();
        for (SdpConnection c : drop) {
            c.abort();
        }
        TRACE.message(TraceLevel.RARE, "listener.close", "SDP listener closed");
    }
}
