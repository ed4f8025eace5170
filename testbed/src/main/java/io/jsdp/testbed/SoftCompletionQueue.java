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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A SoftRdma completion queue: a lock-free bounded ring with many producers (whoever executes a
 * request: posters, the peer's threads, the agent) and many pollers.
 *
 * <h2>Memory order</h2>
 * Every entry carries a sequence number, and only producers write entries. A producer claims position
 * {@code t} by a CAS of {@code tail} once {@code t - head < size} (it keeps a cached copy of
 * {@code head} and reads the pollers' line only when the ring looks full), fills the entry, then
 * publishes it by storing {@code seq = t + 1}. A poller that reads {@code seq == h + 1} (acquire) sees
 * the entry and the payload the request copied before it; it copies the entry out first and then
 * claims it by a CAS of {@code head}: while {@code head == h} no producer may reuse the slot, so what it
 * copied is stable, and a failed CAS means another poller took it. Pollers never write entries, so an
 * entry's cache line only ever travels from producer to poller; {@code head} and {@code tail} sit on
 * separate lines (padding). An empty poll is two loads, a store of the poll count (on the pollers'
 * own line), and — for queues of queue pairs connected to other processes — a look at their wires.
 *
 * <h2>Arming</h2>
 * The one-shot arm state is a Dekker pair with publication: a producer publishes with a volatile store
 * and then reads the arm (volatile); {@link #requestNotify} stores the arm (volatile) before the
 * caller's next poll. So a completion published after an arm always fires it, or the caller's poll
 * after arming finds the completion (the poll-arm-poll idiom). The arm is cleared by CAS, so one arm
 * fires one event.
 *
 * <p>Overflow (more completions than {@link #capacity()}, the ring size) puts the queue in error, as
 * rxe does: polls then return {@code -EOVERFLOW} and the queue pairs using it go to the error state.
 */
final class SoftCompletionQueue extends CqFields implements CompletionQueue, SoftDevice.SoftObject {
    static final TraceComponent TRACE = Trace.component("cq");
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle ARMED;
    private static final VarHandle SEQ;
    static final int ARM_NONE = 0;
    static final int ARM_NEXT = 1;
    static final int ARM_SOLICITED = 2;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(CqConsumer.class, "head", long.class);
            TAIL = l.findVarHandle(CqProducer.class, "tail", long.class);
            ARMED = l.findVarHandle(CqProducer.class, "armed", int.class);
            SEQ = l.findVarHandle(Entry.class, "seq", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SoftDevice device;
    private final SoftCompletionChannel channel;
    private final int size;
    private final int mask;
    private final Entry[] ring;
    private final Tracked tracked;
    /** Set once on overflow; never cleared. */
    private volatile boolean error;
    private final AtomicBoolean overflowReported = new AtomicBoolean();
    private final AtomicInteger eventsDelivered = new AtomicInteger();
    private final AtomicInteger eventsAcked = new AtomicInteger();
    /** Queue pairs using this queue (send or receive side, once per side). */
    final CopyOnWriteArrayList<SoftQueuePair> users = new CopyOnWriteArrayList<>();
    private static final SoftQueuePair[] NO_QPS = {};
    /** Queue pairs connected to other processes using this queue: a poll that finds nothing looks at their wires. */
    private volatile SoftQueuePair[] xp = NO_QPS;
    private final AtomicBoolean closed = new AtomicBoolean();

    SoftCompletionQueue(SoftDevice device, SoftCompletionChannel channel, int entries) {
        this.device = device;
        this.channel = channel;
        this.size = Integer.highestOneBit(Math.max(1, entries - 1)) << 1;
        this.mask = size - 1;
        this.ring = new Entry[size];
        for (int i = 0; i < size; i++) {
            ring[i] = new Entry();
        }
        if (channel != null) {
            channel.users.incrementAndGet();
        }
        this.tracked = device.resources().track(this, "CQ", "CQ of " + size + " on " + device.name());
        device.register(this);
    }

    SoftDevice device() {
        return device;
    }

    /**
     * Adds a completion. Called by whoever executed the request; allocates nothing, takes no lock.
     *
     * @return false when the queue is in error or just overflowed (the completion is lost)
     */
    boolean push(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int immData, int flags,
                 int qpNumber, boolean solicited) {
        if (error || closed.get()) {
            return false;
        }
        Entry e;
        long t;
        while (true) {
            t = (long) TAIL.getOpaque(this);
            if (t - headCache >= size) {
                long h = (long) HEAD.getAcquire(this);
                headCache = h;
                if (t - h >= size) {
                    overflow();
                    return false;
                }
            }
            if (TAIL.compareAndSet(this, t, t + 1)) {
                e = ring[(int) t & mask];
                break;
            }
        }
        e.wrId = wrId;
        e.status = (byte) status.ordinal();
        e.opcode = (byte) opcode.ordinal();
        e.byteLen = byteLen;
        e.immData = immData;
        e.flags = flags;
        e.qpNumber = qpNumber;
        SEQ.setVolatile(e, t + 1); // publish; volatile: ordered before the arm read below (Dekker)
        int a = (int) ARMED.getVolatile(this);
        while (a != ARM_NONE && (a == ARM_NEXT || solicited || status != WcStatus.SUCCESS)) {
            if (ARMED.compareAndSet(this, a, ARM_NONE)) {
                channel.signal(this);
                break;
            }
            a = (int) ARMED.getVolatile(this);
        }
        return true;
    }

    private void overflow() {
        error = true;
        if (!overflowReported.compareAndSet(false, true)) {
            return;
        }
        if (TRACE.on(TraceLevel.ERROR)) {
            TRACE.record(TraceLevel.ERROR, "cq.overflow", size);
        }
        int a = (int) ARMED.getAndSet(this, ARM_NONE);
        if (a != ARM_NONE && channel != null) {
            channel.signal(this); // errors wake any arm
        }
        // rxe: IB_EVENT_CQ_ERR, the queue pairs feeding it go to the error state. Done on the agent:
        // the caller may hold queue-pair locks.
        device.schedule(() -> {
            for (SoftQueuePair qp : users) {
                qp.enterError("completion queue overflow");
            }
        }, 0);
    }

    @Override
    public int poll(WorkCompletion[] completions, int max) {
        polls++;
        if (error) {
            return -Errno.EOVERFLOW;
        }
        int limit = Math.min(max, completions.length);
        int n = take(completions, limit);
        if (n == 0) {
            SoftQueuePair[] x = xp;
            if (x.length != 0) {
                // An event this look fires (the queue armed just before: the engine's look after its arm)
                // goes to the channel's handler once the queue pairs' locks are released, on this thread,
                // not to a thread woken for it. So whatever the look put here must be returned now: the
                // arm it used up wakes nobody else (another thread's completions may have landed too).
                InlineDispatch inline = InlineDispatch.enter();
                try {
                    for (SoftQueuePair q : x) {
                        q.xpService(this);
                    }
                } finally {
                    inline.exit();
                }
                n = take(completions, limit);
            }
        }
        return n;
    }

    /** Whether no published entry waits to be taken (a racy look: one may be published right after). */
    boolean looksEmpty() {
        long h = (long) HEAD.getOpaque(this);
        return (long) SEQ.getAcquire(ring[(int) h & mask]) != h + 1;
    }

    /** Copies out and claims up to {@code limit} published entries. */
    private int take(WorkCompletion[] completions, int limit) {
        int n = 0;
        while (n < limit) {
            long h = (long) HEAD.getOpaque(this);
            Entry e = ring[(int) h & mask];
            if ((long) SEQ.getAcquire(e) != h + 1) {
                break; // empty (or the producer of position h has not published yet)
            }
            WorkCompletion wc = completions[n];
            wc.set(e.wrId, STATUSES[e.status], OPCODES[e.opcode], e.byteLen, e.immData, e.flags, e.qpNumber);
            if (HEAD.compareAndSet(this, h, h + 1)) {
                n++;
            }
            // else another poller took position h: what was copied is overwritten next round
        }
        return n;
    }

    @Override
    public int requestNotify(boolean solicitedOnly) {
        if (channel == null) {
            return Errno.EINVAL;
        }
        if (error) {
            return Errno.EIO;
        }
        while (true) {
            int a = (int) ARMED.getVolatile(this);
            // IBA C11-31/C11-32 (rxe/rvt req_notify_cq): solicited-only never narrows a pending
            // next-completion arm; next-completion widens a solicited-only one.
            int wanted = solicitedOnly && a != ARM_NEXT ? ARM_SOLICITED : ARM_NEXT;
            if (a == wanted || ARMED.compareAndSet(this, a, wanted)) {
                VarHandle.fullFence(); // the caller's next poll is ordered after the arm (see class doc)
                if (xp.length != 0 && !doorbellsWanted()) {
                    device.xp().armed(); // nobody polls now: the progress thread takes over
                }
                return Errno.OK;
            }
        }
    }

    /**
     * Whether the progress thread already asks the peers of every cross-process queue pair completing
     * here for doorbells: then it is woken by their messages, and an arm needs no look of its own (a
     * wake of that thread per arm was most of its work when an engine re-armed after every event). Read
     * after the arm's store and fence; {@link SoftQueuePair#xpCoverage} reads the arm after clearing a
     * word: one of the two sees the other.
     */
    private boolean doorbellsWanted() {
        for (SoftQueuePair q : xp) {
            if (!q.xpDoorbellsWanted(this)) {
                return false;
            }
        }
        return true;
    }

    /** Racy reads, for dumps: the completions held and published, the arm, the events. */
    @Override
    public String describeDeviceState() {
        long h = (long) HEAD.getAcquire(this);
        long t = (long) TAIL.getAcquire(this);
        long published = 0;
        for (long i = h; i < t && i - h < size; i++) {
            if ((long) SEQ.getAcquire(ring[(int) i & mask]) == i + 1) {
                published++;
            }
        }
        int a = (int) ARMED.getVolatile(this);
        return "cq head=" + h + " tail=" + t + " published=" + published + " armed="
            + (a == ARM_NEXT ? "next" : a == ARM_SOLICITED ? "solicited" : "no") + " polls=" + polls + " events delivered="
            + eventsDelivered.get() + " acked=" + eventsAcked.get() + (error ? " OVERFLOW" : "");
    }

    /** Polls so far (a racy count: the progress thread only asks whether it moved). */
    long polls() {
        return polls;
    }

    boolean isArmed() {
        return (int) ARMED.getVolatile(this) != ARM_NONE;
    }

    /** Armed for the next completion (not solicited-only). */
    boolean isArmedForNext() {
        return (int) ARMED.getVolatile(this) == ARM_NEXT;
    }

    void addXp(SoftQueuePair q) {
        synchronized (users) {
            for (SoftQueuePair x : xp) {
                if (x == q) {
                    return;
                }
            }
            SoftQueuePair[] n = java.util.Arrays.copyOf(xp, xp.length + 1);
            n[n.length - 1] = q;
            xp = n;
        }
    }

    void removeXp(SoftQueuePair q) {
        synchronized (users) {
            SoftQueuePair[] cur = xp;
            for (int i = 0; i < cur.length; i++) {
                if (cur[i] == q) {
                    SoftQueuePair[] n = new SoftQueuePair[cur.length - 1];
                    System.arraycopy(cur, 0, n, 0, i);
                    System.arraycopy(cur, i + 1, n, i, cur.length - i - 1);
                    xp = n;
                    return;
                }
            }
        }
    }

    void eventDelivered() {
        eventsDelivered.incrementAndGet();
    }

    /** A delivered event its handler declined, to be delivered again through the channel's queue. */
    void eventReturned() {
        eventsDelivered.decrementAndGet();
    }

    @Override
    public void acknowledgeEvents(int count) {
        eventsAcked.addAndGet(count);
    }

    /** The ring size: the verbs "actual cqe", at least the requested entries. */
    @Override
    public int capacity() {
        return size;
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    boolean isClosed() {
        return closed.get();
    }

    @Override
    public void close() throws VerbsException {
        if (closed.get()) {
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
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (channel != null) {
            channel.forget(this);
            channel.users.decrementAndGet();
        }
        device.unregister(this);
        tracked.release();
    }

    private static final WcStatus[] STATUSES = WcStatus.values();
    private static final WcOpcode[] OPCODES = WcOpcode.values();

    /**
     * One completion slot; fields written by a producer before its sequence number is published.
     * Ordinals rather than enum references, which would cost G1 a write barrier and a card per push.
     */
    static final class Entry {
        @SuppressWarnings("unused") // accessed through SEQ
        private volatile long seq;
        long wrId;
        byte status;
        byte opcode;
        int byteLen;
        int immData;
        int flags;
        int qpNumber;
    }
}

/** Padding before the producers' fields, so they share no cache line with the object header or config. */
abstract class CqPad0 {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

/** Fields the producers write: the claim counter and the one-shot arm (read by every producer). */
abstract class CqProducer extends CqPad0 {
    volatile long tail;
    volatile int armed;
    /** The producers' last read of head (racy: only ever too low, which errs towards re-reading). */
    long headCache;
}

/** Padding between producers and pollers. */
abstract class CqPad1 extends CqProducer {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}

/** The fields pollers write. */
abstract class CqConsumer extends CqPad1 {
    volatile long head;
    /** Polls so far; plain, racy: read by the progress thread only to see whether anyone polls. */
    long polls;
}

/** Padding after the pollers' field. */
abstract class CqFields extends CqConsumer {
    long p20, p21, p22, p23, p24, p25, p26, p27;
}
