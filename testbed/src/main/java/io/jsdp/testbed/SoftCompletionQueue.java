package io.jsdp.testbed;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A SoftRdma completion queue: a ring of preallocated entries with many producers (the threads that
 * execute requests: posters, the peer's threads, the agent) and any number of pollers.
 *
 * <p>Memory order: a producer fills an entry, then publishes it with a release store of {@code tail};
 * a poller reads {@code tail} with acquire before reading entries, so the entry and the data the
 * request moved before it are visible. The poller frees entries with a release store of
 * {@code head}, which producers read with acquire for the overflow check. An empty poll touches no
 * lock: it reads {@code tail} and compares.
 *
 * <p>Overflow (more completions than the capacity) puts the queue in error, as rxe does: polls then
 * return {@code -EOVERFLOW} and the queue pairs using it go to the error state.
 */
final class SoftCompletionQueue implements CompletionQueue, SoftDevice.SoftObject {
    static final TraceComponent TRACE = Trace.component("cq");
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final int ARM_NONE = 0;
    private static final int ARM_NEXT = 1;
    private static final int ARM_SOLICITED = 2;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(SoftCompletionQueue.class, "head", long.class);
            TAIL = l.findVarHandle(SoftCompletionQueue.class, "tail", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SoftDevice device;
    private final SoftCompletionChannel channel;
    private final int capacity;
    private final int mask;
    private final Entry[] ring;
    private final Tracked tracked;
    private final ReentrantLock produceLock = new ReentrantLock();
    private final ReentrantLock pollLock = new ReentrantLock();
    /** Next entry to poll; written by pollers under pollLock (release), read by producers (acquire). */
    @SuppressWarnings("unused")
    private volatile long head;
    /** Next entry to fill; written by producers under produceLock (release), read by pollers (acquire). */
    @SuppressWarnings("unused")
    private volatile long tail;
    /** One-shot arm state; guarded by produceLock. */
    private int armed = ARM_NONE;
    /** Set once on overflow; never cleared. */
    private volatile boolean error;
    private final AtomicInteger eventsDelivered = new AtomicInteger();
    private final AtomicInteger eventsAcked = new AtomicInteger();
    /** Queue pairs using this queue (send or receive side, once per side). */
    final CopyOnWriteArrayList<SoftQueuePair> users = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    SoftCompletionQueue(SoftDevice device, SoftCompletionChannel channel, int capacity) {
        this.device = device;
        this.channel = channel;
        this.capacity = capacity;
        int size = Integer.highestOneBit(Math.max(1, capacity - 1)) << 1;
        this.mask = size - 1;
        this.ring = new Entry[size];
        for (int i = 0; i < size; i++) {
            ring[i] = new Entry();
        }
        if (channel != null) {
            channel.users.incrementAndGet();
        }
        this.tracked = device.resources().track(this, "CQ", "CQ of " + capacity + " on " + device.name());
        device.register(this);
    }

    SoftDevice device() {
        return device;
    }

    /**
     * Adds a completion. Called by whoever executed the request.
     *
     * @return false when the queue is in error or just overflowed (the completion is lost)
     */
    boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int immData, int flags,
                 int qpNumber, boolean solicited) {
        boolean fire = false;
        produceLock.lock();
        try {
            if (error || closed) {
                return false;
            }
            long t = (long) TAIL.getOpaque(this);
            if (t - (long) HEAD.getAcquire(this) >= capacity) {
                overflowLocked();
                return false;
            }
            Entry e = ring[(int) t & mask];
            e.wrId = wrId;
            e.status = status;
            e.opcode = opcode;
            e.byteLen = byteLen;
            e.immData = immData;
            e.flags = flags;
            e.qpNumber = qpNumber;
            TAIL.setRelease(this, t + 1);
            int a = armed;
            if (a == ARM_NEXT || (a == ARM_SOLICITED && (solicited || status != WcStatus.SUCCESS))) {
                armed = ARM_NONE;
                fire = true;
            }
        } finally {
            produceLock.unlock();
        }
        if (fire) {
            channel.signal(this);
        }
        return true;
    }

    private void overflowLocked() {
        error = true;
        if (TRACE.on(TraceLevel.ERROR)) {
            TRACE.record(TraceLevel.ERROR, "cq.overflow", capacity);
        }
        if (armed != ARM_NONE && channel != null) {
            armed = ARM_NONE;
            channel.signal(this);
        }
        // rxe: IB_EVENT_CQ_ERR, the queue pairs feeding it go to the error state. Done on the agent:
        // the caller holds queue-pair locks.
        device.schedule(() -> {
            for (SoftQueuePair qp : users) {
                qp.enterError("completion queue overflow");
            }
        }, 0);
    }

    @Override
    public int poll(WorkCompletion[] completions, int max) {
        if (error) {
            return -Errno.EOVERFLOW;
        }
        long t = (long) TAIL.getAcquire(this);
        if (t == (long) HEAD.getOpaque(this)) {
            return 0;
        }
        pollLock.lock();
        try {
            long h = (long) HEAD.getOpaque(this);
            t = (long) TAIL.getAcquire(this);
            int n = (int) Math.min(Math.min(max, completions.length), t - h);
            for (int i = 0; i < n; i++) {
                Entry e = ring[(int) (h + i) & mask];
                completions[i].set(e.wrId, e.status, e.opcode, e.byteLen, e.immData, e.flags, e.qpNumber);
            }
            HEAD.setRelease(this, h + n);
            return n;
        } finally {
            pollLock.unlock();
        }
    }

    @Override
    public int requestNotify(boolean solicitedOnly) {
        if (channel == null) {
            return Errno.EINVAL;
        }
        if (error) {
            return Errno.EIO;
        }
        produceLock.lock();
        try {
            // IBA C11-31/C11-32 (rxe/rvt req_notify_cq): solicited-only never narrows a pending
            // next-completion arm; next-completion widens a solicited-only one.
            if (armed != ARM_NEXT) {
                armed = solicitedOnly ? ARM_SOLICITED : ARM_NEXT;
            }
        } finally {
            produceLock.unlock();
        }
        return Errno.OK;
    }

    void eventDelivered() {
        eventsDelivered.incrementAndGet();
    }

    @Override
    public void acknowledgeEvents(int count) {
        eventsAcked.addAndGet(count);
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    /** The number of completions waiting to be polled. */
    int size() {
        return (int) ((long) TAIL.getAcquire(this) - (long) HEAD.getAcquire(this));
    }

    @Override
    public void close() throws VerbsException {
        if (closed) {
            return;
        }
        if (!users.isEmpty()) {
            throw new VerbsException(Errno.EBUSY, "completion queue still used by " + users.size()
                + " queue pair side(s)");
        }
        int unacked = eventsDelivered.get() - eventsAcked.get();
        if (unacked > 0) {
            throw new VerbsException(Errno.EBUSY, "completion queue has " + unacked + " unacknowledged event(s)");
        }
        forceClose();
    }

    @Override
    public void forceClose() {
        produceLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            produceLock.unlock();
        }
        if (channel != null) {
            channel.forget(this);
            channel.users.decrementAndGet();
        }
        device.unregister(this);
        tracked.release();
    }

    /** One completion slot; fields written by a producer before the tail release. */
    private static final class Entry {
        long wrId;
        WcStatus status;
        WcOpcode opcode;
        int byteLen;
        int immData;
        int flags;
        int qpNumber;
    }
}
