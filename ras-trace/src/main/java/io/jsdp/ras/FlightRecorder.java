package io.jsdp.ras;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The always-on, in-memory ring of the most recent records at {@link #RING_LEVEL} and below, so
 * that when an error is reported (first-failure data capture) the history leading to it exists
 * even though nothing was being logged (seed 000, "an always-on low level").
 *
 * <p>Multi-producer and lock-free; {@code append} allocates nothing. Each producer claims an
 * index with one {@code getAndIncrement} and writes the slot {@code index & mask}. A slot is a
 * seqlock: its {@code seq} is {@code 0} (empty), odd while one writer owns it, and
 * {@code 2 * (index + 1)} once the record for {@code index} is published. A writer takes the slot
 * with a CAS from an older published value to its own odd value, writes the fields with plain
 * stores and publishes with a release store. {@link #snapshot()} reads {@code seq} (acquire), the
 * fields, an acquire fence and {@code seq} again, and keeps the slot only if both reads show the
 * index it expected; the same protocol as {@link java.util.concurrent.locks.StampedLock}'s
 * optimistic reads.
 *
 * <p>Exclusive ownership matters because the ring can lap a slow writer: two writers of the same
 * slot (indices {@code i} and {@code i + capacity}) must never interleave their field stores, or a
 * reader could accept a record made of both. A writer that finds its slot owned by another writer,
 * or already holding a newer record, gives up and counts the record in {@link #dropped()}; it never
 * waits. This only happens when the ring wraps within the time of one append.
 */
public final class FlightRecorder {
    /** Records at this level and below always go to the ring, whatever a component's configured level. */
    public static final int RING_LEVEL = TraceLevel.RARE;
    /** System property: ring capacity in records, rounded up to a power of two. */
    public static final String RING_SIZE_PROP = "jsdp.trace.ringSize";
    /** Default of {@link #RING_SIZE_PROP}. */
    public static final int RING_SIZE_DEFAULT = 4096;

    /** Upper bound of {@link #RING_SIZE_PROP}; a slot is about 100 bytes. */
    static final int MAX_CAPACITY = 1 << 20;
    /** Time origin for {@link TraceRecord#toString()}: when the first ring of this JVM was created. */
    static final long ORIGIN_NANOS = System.nanoTime();

    private static final VarHandle SEQ;

    static {
        try {
            SEQ = MethodHandles.lookup().findVarHandle(Slot.class, "seq", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Slot[] slots;
    private final int mask;
    /** Next index to claim; every producer increments it. The only write producers contend on. */
    private final AtomicLong nextIndex = new AtomicLong();
    /** Appends given up because their slot was owned by a concurrent writer (see class comment). */
    private final AtomicLong dropped = new AtomicLong();
    /** Indices below this are ignored by snapshots; written by {@link #clear()}, read by snapshots. */
    private volatile long clearedBeforeIndex;

    /**
     * A ring of at least {@code capacity} records.
     *
     * @param capacity requested capacity, 1..{@link #MAX_CAPACITY}; rounded up to a power of two
     */
    FlightRecorder(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY) {
            throw new IllegalArgumentException("flight recorder capacity " + capacity + " out of range 1.." + MAX_CAPACITY);
        }
        final int size = 1 << (32 - Integer.numberOfLeadingZeros(capacity - 1));
        slots = new Slot[size];
        for (int i = 0; i < size; i++) {
            slots[i] = new Slot();
        }
        mask = size - 1;
    }

    /** The JVM-wide ring, sized by {@link #RING_SIZE_PROP}; a bad value fails with the property named. */
    static FlightRecorder fromSystemProperties() {
        return new FlightRecorder(parseRingSize(System.getProperty(RING_SIZE_PROP)));
    }

    static int parseRingSize(String value) {
        if (value == null) {
            return RING_SIZE_DEFAULT;
        }
        try {
            final int size = Integer.parseInt(value.trim());
            if (size >= 1 && size <= MAX_CAPACITY) {
                return size;
            }
        } catch (NumberFormatException e) {
            // fall through to the message that names the property
        }
        throw new IllegalArgumentException(
            RING_SIZE_PROP + ": bad value '" + value + "' (expected an integer 1.." + MAX_CAPACITY + ")");
    }

    /**
     * Number of records the ring keeps.
     *
     * @return the capacity, a power of two
     */
    public int capacity() {
        return slots.length;
    }

    /**
     * Records lost because a slot was being written when the ring lapped it; normally zero.
     *
     * @return appends given up since the ring was created
     */
    public long dropped() {
        return dropped.get();
    }

    /**
     * Appends one record. Allocates nothing, takes no lock and never throws.
     *
     * @param causeClass class name of the cause, or {@code null}
     */
    void append(
        String component, int level, String event, int words,
        long d1, long d2, long d3, long d4, String causeClass) {
        final long index = nextIndex.getAndIncrement();
        final Slot slot = slots[(int) index & mask];
        final long published = publishedSeq(index);
        final long current = (long) SEQ.getAcquire(slot);
        // Odd: another writer owns the slot. >= published: we were lapped before we got here.
        // A failed CAS means another writer just took it. In all three cases drop rather than wait.
        if ((current & 1) != 0 || current >= published || !SEQ.compareAndSet(slot, current, published - 1)) {
            dropped.getAndIncrement();
            return;
        }
        // The CAS is a volatile read and write: the plain stores below cannot move above it.
        final Thread thread = Thread.currentThread();
        slot.timeNanos = System.nanoTime();
        slot.epochMillis = System.currentTimeMillis();
        slot.threadId = thread.getId();
        slot.threadName = thread.getName();
        slot.component = component;
        slot.level = level;
        slot.event = event;
        slot.words = words;
        slot.d1 = d1;
        slot.d2 = d2;
        slot.d3 = d3;
        slot.d4 = d4;
        slot.causeClass = causeClass;
        // Pairs with the acquire in snapshot(): a reader that sees `published` sees the stores above.
        SEQ.setRelease(slot, published);
    }

    /**
     * The most recent records, oldest first. Slots being written or overwritten while the
     * snapshot is taken are left out, never returned half-written.
     *
     * @return a new list of at most {@link #capacity()} records
     */
    public List<TraceRecord> snapshot() {
        return snapshot(null);
    }

    /**
     * The most recent records of one component, oldest first.
     *
     * @param component a component name; {@code null} for all components
     * @return a new list of at most {@link #capacity()} records
     */
    public List<TraceRecord> snapshot(String component) {
        final long end = nextIndex.get();
        final long start = Math.max(clearedBeforeIndex, end - slots.length);
        final List<TraceRecord> records = new ArrayList<>((int) Math.max(0, end - start));
        for (long index = start; index < end; index++) {
            final Slot slot = slots[(int) index & mask];
            final long expected = publishedSeq(index);
            if ((long) SEQ.getAcquire(slot) != expected) {
                continue; // not yet published, being rewritten, or already overwritten
            }
            final TraceRecord record = new TraceRecord(
                index, slot.timeNanos, slot.epochMillis, slot.threadId, slot.threadName,
                slot.component, slot.level, slot.event, slot.words,
                slot.d1, slot.d2, slot.d3, slot.d4, slot.causeClass);
            // Orders the plain field loads above before the re-read (StampedLock.validate).
            VarHandle.acquireFence();
            if ((long) SEQ.getOpaque(slot) != expected) {
                continue; // a writer took the slot while we read it: the fields may be torn
            }
            if (component == null || component.equals(record.component())) {
                records.add(record);
            }
        }
        return records;
    }

    /** Forgets every record appended so far (for tests and after a dump). Concurrent appends are kept. */
    public void clear() {
        clearedBeforeIndex = nextIndex.get();
    }

    private static long publishedSeq(long index) {
        return (index + 1) << 1;
    }

    /** One record. Fields are written only by the writer that owns {@code seq}, read under the seqlock. */
    private static final class Slot {
        long seq; // accessed only through SEQ
        long timeNanos;
        long epochMillis;
        long threadId;
        String threadName;
        String component;
        int level;
        String event;
        int words;
        long d1;
        long d2;
        long d3;
        long d4;
        String causeClass;
    }
}
