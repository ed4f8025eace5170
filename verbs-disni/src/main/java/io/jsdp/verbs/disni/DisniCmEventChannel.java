package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A CM event channel over DiSNI's {@code RdmaEventChannel}, with its own CM thread: it takes DiSNI's events
 * ({@code getCmEvent} with a {@value #POLL_MS} ms timeout), maps each to the port through
 * {@link DisniStatus#cmEventType}, lets the id's state machine decide what it means, queues the port's event
 * for {@link #poll}, and ends waits whose deadline passed. The application's threads never wait inside
 * DiSNI: {@link #poll} parks on a queue (virtual threads unmount).
 */
final class DisniCmEventChannel implements CmEventChannel, DisniObject {
    /** Longest native wait of the CM thread; also the granularity of the adapter's deadlines. */
    static final int POLL_MS = 10;
    private static final TraceComponent TRACE = Trace.component("cm");
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final DisniDevice device;
    final RdmaEventChannel channel;
    /** Guards the state and DiSNI calls of every id of the channel. */
    final ReentrantLock lock = new ReentrantLock();
    /** The port id of each DiSNI id of the channel (identity: DiSNI ids do not override equals). */
    private final Map<RdmaCmId, DisniCmId> ids = new ConcurrentHashMap<>();
    private final AtomicInteger users = new AtomicInteger();
    private final LinkedBlockingQueue<CmEvent> events = new LinkedBlockingQueue<>();
    private final Tracked tracked;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean closed;

    DisniCmEventChannel(DisniDevice device, RdmaEventChannel channel) {
        this.device = device;
        this.channel = channel;
        this.tracked = device.resources().track(this, "event channel", "CM event channel on " + device.name());
        device.register(this);
        this.thread = new Thread(this::run, "jsdp-" + device.name() + "-cm-" + THREADS.incrementAndGet());
        thread.setDaemon(true);
        thread.start();
    }

    RdmaDevice device() {
        return device;
    }

    DisniCmId createId() throws VerbsException {
        if (closed) {
            throw new VerbsException(Errno.EINVAL, "event channel is closed");
        }
        lock.lock();
        try {
            RdmaCmId raw = device.cm.createId(channel, RdmaCm.RDMA_PS_TCP);
            DisniCmId id = new DisniCmId(device, this, raw, DisniCmId.State.IDLE);
            ids.put(raw, id);
            users.incrementAndGet();
            return id;
        } catch (IOException e) {
            throw DisniDevice.failure("create a CM id", e);
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        while (running) {
            RdmaCmEvent e;
            try {
                e = device.cm.getCmEvent(channel, POLL_MS);
            } catch (IOException ex) {
                if (!running) {
                    break;
                }
                TRACE.record(TraceLevel.ERROR, "cm.getEventFailed", ex);
                sleep();
                continue;
            }
            if (e != null) {
                dispatch(e);
                device.cm.ackCmEvent(e);
            }
            expire(System.nanoTime());
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL_MS);
        } catch (InterruptedException ignored) {
            // closing
        }
    }

    /**
     * Handles one DiSNI event: finds (or, for a connect request, creates) the port id, applies the event to
     * its state and queues the port's event. Package-private so tests can feed events the shim cannot make.
     *
     * @param e DiSNI's event
     */
    void dispatch(RdmaCmEvent e) {
        CmEventType type = DisniStatus.cmEventType(e.getEvent());
        if (type == null) {
            TRACE.record(TraceLevel.ERROR, "cm.unknownEvent", e.getEvent());
            return;
        }
        lock.lock();
        try {
            RdmaCmId rawListen = e.getListenIdPriv();
            RdmaCmId rawId = e.getConnIdPriv();
            DisniCmId listen = rawListen == null ? null : ids.get(rawListen);
            DisniCmId id;
            if (type == CmEventType.CONNECT_REQUEST) {
                if (rawId == null || listen == null || listen.state() != DisniCmId.State.LISTENING) {
                    TRACE.record(TraceLevel.ERROR, "cm.requestWithoutListener", e.getEvent());
                    return;
                }
                id = new DisniCmId(device, this, rawId, DisniCmId.State.REQUEST_PENDING);
                ids.put(rawId, id);
                users.incrementAndGet();
            } else {
                id = rawId == null ? null : ids.get(rawId);
                if (id == null) {
                    TRACE.record(5, "cm.eventForUnknownId", e.getEvent()); // destroyed meanwhile
                    return;
                }
            }
            CmEvent out = id.onEvent(type, listen, System.nanoTime());
            if (out != null) {
                events.add(out);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Ends the waits whose deadline passed. */
    void expire(long nowNs) {
        lock.lock();
        try {
            for (DisniCmId id : ids.values()) {
                CmEvent out = id.onDeadline(nowNs);
                if (out != null) {
                    events.add(out);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Forgets a destroyed DiSNI id. Lock held. */
    void forget(RdmaCmId raw) {
        ids.remove(raw);
    }

    void idClosed(DisniCmId id) {
        users.decrementAndGet();
    }

    @Override
    public CmEvent poll(long timeoutNs) throws InterruptedException, VerbsException {
        if (closed) {
            throw new VerbsException(Errno.EINVAL, "event channel is closed");
        }
        return timeoutNs <= 0 ? events.poll() : events.poll(timeoutNs, TimeUnit.NANOSECONDS);
    }

    @Override
    public void close() throws VerbsException {
        if (closed) {
            return;
        }
        int n = users.get();
        if (n > 0) {
            throw new VerbsException(Errno.EBUSY, "event channel still has " + n + " CM id(s)");
        }
        forceClose();
    }

    @Override
    public int closeOrder() {
        return 5;
    }

    @Override
    public void forceClose() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        running = false;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            device.cm.destroyEventChannel(channel);
        } catch (IOException e) {
            TRACE.record(TraceLevel.ERROR, "cm.destroyChannelFailed", e);
        }
        device.unregister(this);
        tracked.release();
    }
}
