package io.jsdp.testbed.shm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A doorbell wait in shared memory: one waiter process parks on it, any process wakes it. The
 * record is 64 bytes on a 64-byte boundary of a {@link SharedSegment}, in native byte order (both
 * sides are on one host):
 *
 * <pre>
 *  0                8           12          16               24               32           64
 *  +----------------+-----------+-----------+----------------+----------------+------------+
 *  | sequence (i64) | armed     | doorbell  | waiter pid     | waiter start   | (reserved) |
 *  |                | (i32)     | id (i32)  | (i64)          | (i64)          |            |
 *  +----------------+-----------+-----------+----------------+----------------+------------+
 *   wakers add 1     waiter 0→1  written by the waiter's {@link #bindWaiter()}, before any arm
 *                    waker 1→0
 * </pre>
 *
 * <p>The protocol never loses a wakeup (architecture decision 5; issue 3). It is a Dekker pair:
 * <ul>
 *   <li><b>waiter</b>: poll {@code sequence} for the spin window; then store {@code armed = 1}
 *       (volatile), full fence, load {@code sequence} again, and only if it is unchanged park;</li>
 *   <li><b>waker</b>: add 1 to {@code sequence} (volatile read-modify-write), then load
 *       {@code armed} (volatile); if it is 1, CAS it to 0 and ring the waiter's doorbell.</li>
 * </ul>
 * Each side stores, fences and then loads what the other stores, so at least one sees the other: a
 * waiter that armed after the waker's load finds the new sequence on its re-check and does not park;
 * a waker that loads after the arm rings. The CAS makes one doorbell per arm however many wakers
 * race. A doorbell crosses processes only when the waiter is armed, so a waiter still spinning, or
 * one that is never blocked, costs its wakers no system call.
 *
 * <p>The accesses go through {@link MethodHandles#byteBufferViewVarHandle} on the mapped (direct)
 * buffer, which supports volatile access and CAS at aligned offsets; the mapping is page-aligned and
 * the record 64-byte aligned. Park is {@link LockSupport#parkNanos}, so a virtual thread unmounts;
 * each park is capped by {@link ShmSettings#parkSafetyNetMs()} so a doorbell lost by a bug costs a
 * bounded delay, and such a rescue is counted ({@link #safetyNetRescues()}) so tests can insist on
 * zero.
 *
 * <p>One thread at a time may wait on a word (one waiter process, one thread in it); any number of
 * threads in any processes may wake it. {@link #await} returns on any change of the sequence, so
 * callers re-check their own condition, as with any event count.
 */
public final class WaitWord {
    /** Bytes of one record (a cache line). */
    public static final int BYTES = 64;
    /** {@link #await} status: the timeout passed with the sequence unchanged. */
    public static final long TIMED_OUT = -1;
    /** {@link #await} status: the node closed. */
    public static final long CLOSED = -2;
    /** {@link #await} status: the waiting thread is interrupted (its interrupt status stays set). */
    public static final long INTERRUPTED = -3;
    /** {@link #wake(int)}: the ringer gives no hint. */
    public static final int NO_HINT = -1;

    static final int SEQUENCE_OFFSET = 0;
    static final int ARMED_OFFSET = 8;
    static final int DOORBELL_OFFSET = 12;
    static final int PID_OFFSET = 16;
    static final int START_OFFSET = 24;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final ShmNode node;
    private final ByteBuffer buffer;
    private final int base;
    private final long spinNs;
    private final long safetyNetNs;

    // Waiter side (one thread at a time).
    private ShmNode.Doorbell doorbell;
    /**
     * The sequence the latest arm of this process was made against (the waiter's {@link #await} or a
     * {@link #rearm}): written by the arming thread before its arm, read by the node thread's action
     * ({@link #soleWakeSinceArm}). -1 before any arm.
     */
    private volatile long armedAt = -1;
    // Waker side: the last target resolved from the record, so ringing allocates nothing. Racy
    // between wakers but benign: NodeId is immutable and safely published (final fields).
    private NodeId target;

    // Local counters: this process's view only.
    private final AtomicLong doorbellsRung = new AtomicLong();
    private final AtomicLong parks = new AtomicLong();
    private final AtomicLong safetyNetRescues = new AtomicLong();

    private WaitWord(ShmNode node, ByteBuffer buffer, int base) {
        this.node = node;
        this.buffer = buffer;
        this.base = base;
        this.spinNs = node.settings().spinNs();
        this.safetyNetNs = node.settings().parkSafetyNetNs();
    }

    /**
     * The wait word at {@code offset} of {@code segment}, used through {@code node}. A new segment is
     * zero-filled, which is a valid unbound, unarmed word.
     *
     * @param node this process's node (rings and receives doorbells)
     * @param segment the segment
     * @param offset the byte offset, a multiple of {@link #BYTES}
     * @return the word
     * @throws IllegalArgumentException when the offset is misaligned or the record does not fit
     */
    public static WaitWord at(ShmNode node, SharedSegment segment, int offset) {
        ByteBuffer b = segment.buffer();
        if (offset < 0 || offset % BYTES != 0 || offset > b.capacity() - BYTES) {
            throw new IllegalArgumentException("wait word offset " + offset + " is not a multiple of " + BYTES
                + " inside " + segment);
        }
        return new WaitWord(node, b, offset);
    }

    /**
     * Makes this process the word's waiter: registers a doorbell with the node and writes its id and
     * this process's id into the record, so wakers know where to ring. Call before waiting, and
     * before the wakers can find the waiter armed (the arm's volatile store publishes these fields).
     */
    public void bindWaiter() {
        if (doorbell == null) {
            doorbell = node.newDoorbell();
        }
        NodeId me = node.id();
        LONGS.setRelease(buffer, base + PID_OFFSET, me.pid());
        LONGS.setRelease(buffer, base + START_OFFSET, me.start());
        INTS.setRelease(buffer, base + DOORBELL_OFFSET, doorbell.id);
    }

    /**
     * Lets this process's node thread do the waiter's work when a peer rings: for a doorbell from
     * another process the node thread runs {@code action}, and unparks the waiter only when the action
     * answers false (rings from this process only unpark it: their ringer may hold locks the action
     * needs). An action that answers true must have done all the waiter would do for the ring and
     * re-armed the word through {@link #rearm}, so the next ring comes to the node thread again. Call
     * after {@link #bindWaiter()}, before waiting.
     *
     * @param action what a peer's doorbell runs on the node thread, given the ringer's hint
     *     ({@link #wake(int)}); true when the waiter need not wake. It must not block
     */
    public void onPeerDoorbell(java.util.function.IntPredicate action) {
        ShmNode.Doorbell d = doorbell;
        if (d == null) {
            throw new IllegalStateException("onPeerDoorbell on a wait word this process has not bound");
        }
        d.onNodeThread = action;
    }

    /**
     * Arms the word on the waiter's behalf, for a thread that did the waiter's work after a ring (the
     * node thread, {@link #onPeerDoorbell}), so that the next waker rings again: the waiter's own
     * Dekker step (store the arm, fence, load the sequence). When the sequence moved past
     * {@code observed}, a waker may have found the word unarmed and not rung: the arm is withdrawn and
     * the caller must look again (or wake the waiter). The waiter, parked or not, keeps its own part:
     * its next look finds the moved sequence, and an arm it withdraws on its way out is one it renews
     * before it parks again.
     *
     * @param observed the sequence the caller read before it did the work
     * @return true when armed with the sequence unchanged
     */
    public boolean rearm(long observed) {
        armedAt = observed;
        INTS.setVolatile(buffer, base + ARMED_OFFSET, 1);
        VarHandle.fullFence();
        if (sequence() != observed) {
            disarm();
            return false;
        }
        return true;
    }

    /** Gives the doorbell back; the word can be bound again, here or by another process. */
    public void unbindWaiter() {
        if (doorbell != null) {
            node.freeDoorbell(doorbell);
            doorbell = null;
        }
    }

    /**
     * The sequence (a volatile load): pass it to {@link #await} after checking the condition it guards.
     *
     * @return the number of wakes so far
     */
    public long sequence() {
        return (long) LONGS.getVolatile(buffer, base + SEQUENCE_OFFSET);
    }

    /**
     * Whether the waiter is armed (parked or about to park).
     *
     * @return the armed word is set
     */
    public boolean armed() {
        return (int) INTS.getVolatile(buffer, base + ARMED_OFFSET) != 0;
    }

    /**
     * Waits until the sequence differs from {@code observed}: spins for the spin window, then arms and
     * parks until a waker rings (see the class comment). Allocates nothing and throws nothing on the
     * way.
     *
     * @param observed a value {@link #sequence()} returned
     * @param timeoutNs the longest wait
     * @return the new sequence (not negative), or {@link #TIMED_OUT}, {@link #CLOSED} or
     *     {@link #INTERRUPTED}
     * @throws IllegalStateException when this process has not {@linkplain #bindWaiter() bound} the word
     */
    public long await(long observed, long timeoutNs) {
        long s = sequence();
        if (s != observed) {
            return s;
        }
        long startNs = System.nanoTime();
        if (spinNs > 0) {
            long spinEnd = startNs + Math.min(spinNs, timeoutNs);
            while (System.nanoTime() - spinEnd < 0) {
                Thread.onSpinWait();
                s = sequence();
                if (s != observed) {
                    return s;
                }
            }
        }
        ShmNode.Doorbell d = doorbell;
        if (d == null) {
            throw new IllegalStateException("await on a wait word this process has not bound");
        }
        // Published before the arm, so the node thread's unpark after a doorbell finds this thread.
        d.waiter = Thread.currentThread();
        armedAt = observed;
        try {
            for (;;) {
                INTS.setVolatile(buffer, base + ARMED_OFFSET, 1);
                // Dekker: the arm store must be globally visible before the sequence load below.
                // Volatile store then volatile load are already ordered (sequential consistency of
                // volatiles); the fence says so where the reader looks.
                VarHandle.fullFence();
                s = sequence();
                if (s != observed) {
                    disarm();
                    return s;
                }
                if (!node.isOpen()) {
                    disarm();
                    return CLOSED;
                }
                if (Thread.currentThread().isInterrupted()) {
                    disarm();
                    return INTERRUPTED; // park would return at once: do not spin on it
                }
                long now = System.nanoTime();
                long remaining = timeoutNs - (now - startNs); // no overflow for a Long.MAX_VALUE timeout
                if (remaining <= 0) {
                    disarm();
                    return TIMED_OUT;
                }
                long slice = Math.min(remaining, safetyNetNs);
                parks.incrementAndGet();
                LockSupport.parkNanos(this, slice);
                if (slice == safetyNetNs && System.nanoTime() - now >= slice && sequence() != observed) {
                    // The park ran out its safety net although a waker had moved the sequence: its
                    // doorbell was lost. Must never happen; counted so tests fail if it does.
                    safetyNetRescues.incrementAndGet();
                }
                s = sequence();
                if (s != observed) {
                    // woken by the waker's doorbell (it took the arm) or after it: no arm again, which a
                    // second wake would take and ring for nothing
                    disarm();
                    return s;
                }
                // loop: re-arm (a waker that rang has cleared it) and re-check
            }
        } finally {
            d.waiter = null;
        }
    }

    /**
     * Withdraws the arm. If a waker already took it (the CAS fails), its doorbell is on its way and
     * will unpark this thread once, spuriously: harmless, every park re-checks.
     */
    private void disarm() {
        INTS.compareAndSet(buffer, base + ARMED_OFFSET, 1, 0);
    }

    /**
     * Wakes the waiter: adds 1 to the sequence and, only if the waiter is armed, rings its doorbell
     * (a kernel crossing when it is in another process). Allocates nothing when the waiter's node is
     * the one last rung and already connected.
     *
     * @return true when a doorbell was rung
     */
    public boolean wake() {
        return wake(NO_HINT);
    }

    /**
     * {@link #wake()}, telling the waiter's node-thread action what the ringer published ({@code hint}:
     * for SoftRdma, the waiter's queue pair it wrote to). The hint is exact only for the wake that took
     * the arm; a waiter uses it only when that wake is the sole one since its arm
     * ({@link #soleWakeSinceArm}).
     *
     * @param hint a value for the waiter's action, or {@link #NO_HINT}
     * @return true when a doorbell was rung
     */
    public boolean wake(int hint) {
        LONGS.getAndAdd(buffer, base + SEQUENCE_OFFSET, 1L);
        if ((int) INTS.getVolatile(buffer, base + ARMED_OFFSET) == 0) {
            return false; // spinning, or not waiting: it sees the sequence without help
        }
        if (!INTS.compareAndSet(buffer, base + ARMED_OFFSET, 1, 0)) {
            return false; // another waker took the arm and rings
        }
        // The waiter wrote these before its arm, which the volatile load above observed.
        long pid = (long) LONGS.getAcquire(buffer, base + PID_OFFSET);
        long start = (long) LONGS.getAcquire(buffer, base + START_OFFSET);
        int id = (int) INTS.getAcquire(buffer, base + DOORBELL_OFFSET);
        NodeId t = target;
        if (t == null || t.pid() != pid || t.start() != start) {
            if (pid <= 0 || start < 0) {
                return false; // armed but never bound: cannot happen through this class
            }
            t = new NodeId(pid, start);
            target = t;
        }
        doorbellsRung.incrementAndGet();
        node.ringDoorbell(t, id, hint); // PEER_GONE: the waiter's process is dead, nobody to wake
        return true;
    }

    /**
     * Whether the sequence {@code sequenceNow} is one wake past the latest arm: then the ring being
     * delivered came from the only wake since that arm (the one that took it), and its hint names all
     * that was published since; any other wake after the arm found it taken and rang nothing, which
     * moves the sequence further. An arm withdrawn (its check failed) leaves its thread to look at
     * everything itself.
     *
     * @param sequenceNow a value {@link #sequence()} returned, after the ring
     * @return true when the ring's hint covers every wake since the arm
     */
    public boolean soleWakeSinceArm(long sequenceNow) {
        return sequenceNow == armedAt + 1;
    }

    /**
     * Doorbells this process's {@link #wake()}s rang on this word.
     *
     * @return the count
     */
    public long doorbellsRung() {
        return doorbellsRung.get();
    }

    /**
     * Times this process's waiter parked on this word.
     *
     * @return the count
     */
    public long parks() {
        return parks.get();
    }

    /**
     * Parks of this process's waiter that ran out their safety net with the sequence moved: lost
     * doorbells. Zero unless the protocol is broken.
     *
     * @return the count
     */
    public long safetyNetRescues() {
        return safetyNetRescues.get();
    }

    @Override
    public String toString() {
        return "WaitWord[" + base + ", sequence " + sequence() + (armed() ? ", armed" : "") + "]";
    }
}
