package io.jsdp.flow.engine;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The SDP engine's per-device context: one protection domain, one completion channel every
 * connection's completion queue reports to, one connection-manager event channel for every id, and
 * three threads for all connections of the device — none per connection (architecture decision 5):
 * <ul>
 *   <li>the <b>progress</b> thread waits on the completion channel and lets a connection whose armed
 *       queue fired make progress (credit updates that let queued data go, DisConn, wakeups of
 *       parked readers and writers): the "device agent" that keeps connections moving while their
 *       applications compute;</li>
 *   <li>the <b>CM</b> thread takes connection-manager events and hands each to its connection or
 *       listener;</li>
 *   <li>the <b>timer</b> thread runs connect, close and keepalive timers.</li>
 * </ul>
 * Spinning readers and writers poll their queues themselves; the progress thread is involved only for
 * armed queues, so a busy connection costs it nothing. Where the device can hand events to the stack
 * on its own thread ({@link CompletionChannel#dispatchTo}: SoftRdma's shm node thread, which takes the
 * peer's doorbell from the kernel), the connection makes that progress there, and the waiting reader,
 * writer or selector is the next thread woken; the progress thread then takes only the events the
 * device thread could not handle without waiting for a connection's lock.
 */
public final class SdpStack implements AutoCloseable {
    static final TraceComponent TRACE = Trace.component("sdp");
    /** How often the service threads look at the closed flag while idle. */
    private static final long IDLE_POLL_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** Pause before a service thread waits again after its wait threw unexpectedly (no busy loop on a bug). */
    private static final long SUPERVISED_RETRY_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private final RdmaDevice device;
    private final boolean ownsDevice;
    private final ProtectionDomain pd;
    private final CompletionChannel completionChannel;
    private final CmEventChannel cmChannel;
    private final ScheduledThreadPoolExecutor timer;
    private final Thread progressThread;
    private final Thread cmThread;
    private final ConcurrentHashMap<CompletionQueue, SdpConnection> byCq = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<CmId, CmHandler> byId = new ConcurrentHashMap<>();
    private final StackStatistics statistics = new StackStatistics();
    private final ConnectionLimits limits;
    /** Zero copy for connections created from now on (module {@code zcopy}); null: buffer copy only. */
    private volatile LargeTransfers.Factory largeTransfers;
    private volatile boolean closed;

    /** Receives the connection-manager events of one id. */
    interface CmHandler {
        void onCmEvent(CmEvent event);
    }

    private SdpStack(RdmaDevice device, boolean ownsDevice) throws VerbsException {
        ExitDrain.configuredMs(); // a bad jsdp.exitDrainMs fails here, before anything is allocated
        this.limits = new ConnectionLimits(); // and so does a bad jsdp.limit.*
        this.device = device;
        this.ownsDevice = ownsDevice;
        this.pd = device.allocateProtectionDomain();
        this.completionChannel = device.createCompletionChannel();
        this.cmChannel = device.createEventChannel();
        String name = device.name();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "jsdp-timer-" + name));
        timer.setRemoveOnCancelPolicy(true);
        this.progressThread = daemon(this::progressLoop, "jsdp-progress-" + name);
        this.cmThread = daemon(this::cmLoop, "jsdp-cm-" + name);
        completionChannel.dispatchTo(this::onDeviceEvent); // false on hardware: every event comes to progressLoop
        progressThread.start();
        cmThread.start();
        TRACE.message(TraceLevel.RARE, "stack.open", "SDP stack open on device " + name + " (" + device.provider() + ")");
        ExitDrain.add(this);
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Opens a stack on a device; closing the stack leaves the device open.
     *
     * @param device an open device
     * @return the stack
     * @throws VerbsException when the device cannot give a domain and channels
     */
    public static SdpStack open(RdmaDevice device) throws VerbsException {
        return new SdpStack(device, false);
    }

    /**
     * Opens a stack that closes {@code device} when it closes.
     *
     * @param device an open device
     * @return the stack
     * @throws VerbsException when the device cannot give a domain and channels
     */
    public static SdpStack openOwning(RdmaDevice device) throws VerbsException {
        return new SdpStack(device, true);
    }

    /**
     * Starts connecting to an SDP listener. The connection is returned at once in
     * {@link SdpConnection.State#CONNECTING}; {@link SdpConnection#awaitConnected} waits for the
     * connection manager and the Hello/HelloAck exchange, and {@link SdpConnection#OP_CONNECT} says
     * when it is done.
     *
     * @param remote the listener's address
     * @param options the connection's settings (copied)
     * @return the connecting connection
     * @throws VerbsException when the device cannot give the connection's resources
     * @throws SdpLimitException when the stack is at one of its {@link #limits()}: nothing was allocated
     */
    public SdpConnection connect(InetSocketAddress remote, SdpOptions options) throws VerbsException, SdpLimitException {
        return connect(remote, options, null);
    }

    /**
     * {@link #connect(InetSocketAddress, SdpOptions)} from a given local address, as a TCP socket bound
     * before its connect ({@link io.jsdp.verbs.CmId#resolveAddress(InetSocketAddress, InetSocketAddress, int)}).
     *
     * @param remote the listener's address
     * @param options the connection's settings (copied)
     * @param source the local address and port (wildcard address: routing's; port 0: the device's), or null
     * @return the connecting connection
     * @throws VerbsException when the device cannot give the connection's resources
     * @throws SdpLimitException when the stack is at one of its {@link #limits()}: nothing was allocated
     */
    public SdpConnection connect(InetSocketAddress remote, SdpOptions options, InetSocketAddress source)
        throws VerbsException, SdpLimitException {
        ensureOpen();
        ConnectionLimits.Cap cap = limits.admit();
        if (cap != null) {
            limits.connectLimited();
            throw new SdpLimitException(ConnectionLimits.REACHED_OPENING + ": " + limits.reached(cap));
        }
        SdpConnection c;
        try {
            CmId id = device.createId(cmChannel);
            try {
                c = new SdpConnection(this, id, true, options.copy());
            } catch (VerbsException | RuntimeException e) {
                id.close();
                throw e;
            }
        } catch (VerbsException | RuntimeException e) {
            limits.handshakeEnded();
            limits.released();
            throw e;
        }
        c.holdAdmission();
        c.startConnect(remote, source);
        return c;
    }

    /**
     * Listens for SDP connections.
     *
     * @param local the address to bind; port 0 takes an ephemeral port
     * @param backlog the most connections established but not yet accepted (more are refused)
     * @param options the accepted connections' settings (copied)
     * @return the listener
     * @throws VerbsException {@link io.jsdp.verbs.Errno#EADDRINUSE} when the port is taken
     */
    public SdpListener listen(InetSocketAddress local, int backlog, SdpOptions options) throws VerbsException {
        ensureOpen();
        CmId id = device.createId(cmChannel);
        try {
            return new SdpListener(this, id, local, Math.max(1, backlog), options.copy());
        } catch (VerbsException | RuntimeException e) {
            id.close();
            throw e;
        }
    }

    private void ensureOpen() throws VerbsException {
        if (closed) {
            throw new VerbsException(io.jsdp.verbs.Errno.EINVAL, "SDP stack on " + device.name() + " is closed");
        }
    }

    RdmaDevice device() {
        return device;
    }

    StackStatistics statistics() {
        return statistics;
    }

    /**
     * The connections of this stack whose resources are not released yet: connecting, accepted but not
     * taken, established, closing.
     *
     * @return a copy, in no particular order
     */
    public java.util.List<SdpConnection> connections() {
        java.util.List<SdpConnection> out = new java.util.ArrayList<>();
        for (SdpConnection c : byCq.values()) {
            if (!c.isReleased()) {
                out.add(c);
            }
        }
        return out;
    }

    /**
     * The caps on this stack's connections ({@code jsdp.limit.*}), what is held of them and what was refused.
     *
     * @return the limits (settable)
     */
    public ConnectionLimits limits() {
        return limits;
    }

    /**
     * The totals of every connection this stack has had, live and released.
     *
     * @return the totals
     */
    public StackStatistics.Totals totals() {
        return statistics.totals(byCq.values());
    }

    ProtectionDomain pd() {
        return pd;
    }

    CompletionChannel completionChannel() {
        return completionChannel;
    }

    void register(CompletionQueue cq, SdpConnection c) {
        byCq.put(cq, c);
    }

    void unregister(CompletionQueue cq) {
        byCq.remove(cq);
    }

    void register(CmId id, CmHandler h) {
        byId.put(id, h);
    }

    void unregister(CmId id) {
        byId.remove(id);
    }

    ScheduledFuture<?> schedule(Runnable task, long delayNs) {
        if (closed) {
            return null;
        }
        try {
            return timer.schedule(() -> {
                try {
                    task.run();
                } catch (RuntimeException | InternalError e) { // InternalError: a memory fault (truncated segment)
                    TRACE.record(TraceLevel.ERROR, "timer.taskFailed", e);
                }
            }, delayNs, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return null;
        }
    }

    /**
     * An event on a device thread ({@link CompletionChannel#dispatchTo}): handled there unless it
     * would wait for the connection's lock, which the progress thread then does.
     */
    private boolean onDeviceEvent(CompletionQueue cq) {
        if (closed) {
            cq.acknowledgeEvents(1); // no progress thread is left to take it; the queue must close
            return true;
        }
        SdpConnection c = byCq.get(cq);
        try {
            if (c != null && !c.onCompletionEventWithoutWaiting()) {
                return false;
            }
        } catch (RuntimeException | InternalError e) {
            TRACE.record(TraceLevel.ERROR, "progress.connectionFailed", e);
            c.internalError(e);
        }
        cq.acknowledgeEvents(1);
        return true;
    }

    private void progressLoop() {
        while (!closed) {
            CompletionQueue cq;
            try {
                cq = completionChannel.await(IDLE_POLL_NS);
            } catch (InterruptedException e) {
                if (closed) {
                    return;
                }
                continue;
            } catch (VerbsException e) {
                if (!closed) {
                    TRACE.record(TraceLevel.ERROR, "progress.channelFailed", e);
                }
                return;
            } catch (RuntimeException e) {
                // a device's bug must not end every connection's progress: record it and wait again
                TRACE.record(TraceLevel.ERROR, "progress.waitFailed", e);
                LockSupport.parkNanos(SUPERVISED_RETRY_NS);
                continue;
            }
            if (cq == null) {
                continue;
            }
            cq.acknowledgeEvents(1);
            SdpConnection c = byCq.get(cq);
            if (c != null) {
                try {
                    c.onCompletionEvent();
                } catch (RuntimeException | InternalError e) {
                    // never let one connection stop the others' progress
                    TRACE.record(TraceLevel.ERROR, "progress.connectionFailed", e);
                    c.internalError(e);
                }
            }
        }
    }

    private void cmLoop() {
        while (!closed) {
            CmEvent e;
            try {
                e = cmChannel.poll(IDLE_POLL_NS);
            } catch (InterruptedException ie) {
                if (closed) {
                    return;
                }
                continue;
            } catch (VerbsException ve) {
                if (!closed) {
                    TRACE.record(TraceLevel.ERROR, "cm.channelFailed", ve);
                }
                return;
            } catch (RuntimeException re) {
                TRACE.record(TraceLevel.ERROR, "cm.pollFailed", re);
                LockSupport.parkNanos(SUPERVISED_RETRY_NS);
                continue;
            }
            if (e == null) {
                continue;
            }
            CmId target = e.type() == CmEventType.CONNECT_REQUEST ? e.listenId() : e.id();
            CmHandler h = target == null ? null : byId.get(target);
            if (TRACE.on(TraceLevel.INTERNALS)) {
                TRACE.message(TraceLevel.INTERNALS, "cm.event", "CM event " + e + (h == null ? " (no owner)" : ""));
            }
            if (h == null) {
                if (e.type() == CmEventType.CONNECT_REQUEST) {
                    e.id().close(); // a listener that is gone: refuse
                }
                continue;
            }
            try {
                h.onCmEvent(e);
            } catch (RuntimeException | InternalError ex) {
                TRACE.record(TraceLevel.ERROR, "cm.handlerFailed", ex);
            }
        }
    }

    /**
     * Closes the stack: every listener stops, every connection is aborted (peers see a reset), the
     * threads end and the domain and channels are freed. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        List<CmHandler> handlers = new ArrayList<>(byId.values());
        for (CmHandler h : handlers) {
            if (h instanceof SdpListener l) {
                l.close();
            }
        }
        for (SdpConnection c : new ArrayList<>(byCq.values())) {
            c.stackClosing();
        }
        closed = true;
        ExitDrain.remove(this);
        timer.shutdownNow();
        join(progressThread);
        join(cmThread);
        drainEvents();
        for (SdpConnection c : new ArrayList<>(byCq.values())) {
            c.stackClosing();
            c.finalCleanup();
        }
        LargeTransfers.Factory f = largeTransfers;
        if (f != null) {
            f.close(); // after every connection released: the registrations it holds may go
        }
        quietly(completionChannel::close);
        quietly(cmChannel::close);
        quietly(pd::close);
        if (ownsDevice) {
            device.close();
        }
        TRACE.message(TraceLevel.RARE, "stack.close", "SDP stack closed on device " + device.name());
    }

    /**
     * Acknowledges the events a device thread queued for the progress thread while it was ending:
     * a completion queue with an unacknowledged event cannot be destroyed, nor then the channel.
     */
    private void drainEvents() {
        for (;;) {
            CompletionQueue cq;
            try {
                cq = completionChannel.await(0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (VerbsException e) {
                return;
            }
            if (cq == null) {
                return;
            }
            cq.acknowledgeEvents(1);
        }
    }

    private interface VerbsAction {
        void run() throws VerbsException;
    }

    private static void quietly(VerbsAction a) {
        try {
            a.run();
        } catch (VerbsException e) {
            TRACE.record(TraceLevel.ERROR, "stack.closeFailed", e);
        }
    }

    private static void join(Thread t) {
        boolean interrupted = false;
        for (;;) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Installs zero copy for the connections created from now on: they offer it in their Hello and
     * use it when the peer does too. The stack closes the factory when it closes.
     *
     * @param factory the zero-copy implementation (module {@code zcopy}), or null for buffer copy only
     */
    public void largeTransfers(LargeTransfers.Factory factory) {
        this.largeTransfers = factory;
    }

    /**
     * The installed zero-copy implementation.
     *
     * @return the factory, or null
     */
    public LargeTransfers.Factory largeTransfers() {
        return largeTransfers;
    }

    /**
     * The protection domain of every queue pair and registration of this stack.
     *
     * @return the domain
     */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /**
     * Connections of this stack that still hold device resources.
     *
     * @return the count
     */
    public int openConnections() {
        return byCq.size();
    }

    /**
     * The device.
     *
     * @return the device the stack runs on
     */
    public RdmaDevice rdmaDevice() {
        return device;
    }
}
