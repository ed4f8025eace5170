package io.jsdp.bench.jmh;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.BooleanSupplier;

/**
 * The raw throughput baseline: a single-producer single-consumer byte ring in shared memory, both
 * sides spinning, two copies per byte (the producer copies in, the consumer copies out into its own
 * buffer, as a socket's write and read would), the method of
 * {@code ../shared/reference/performance-baselines.md} (1 MiB ring, 64 KiB writes ≈ 13.8 GB/s there).
 *
 * <pre>
 *   0          128        256        4096
 *   +----------+----------+----------+------------------------+
 *   | tail (8) | head (8) | stop (8) | data (capacity bytes)  |
 *   +----------+----------+----------+------------------------+
 * </pre>
 *
 * {@code tail} counts bytes ever written; only the producer stores it, with release after copying
 * the bytes in, and the consumer's acquire load pairs with that store. {@code head} counts bytes ever
 * read; only the consumer stores it, with release after copying out, and the producer's acquire load
 * pairs with it before it overwrites that space. {@code stop} is set once by the producer. Each counter
 * has its own cache line (and the adjacent-line prefetcher's neighbour); capacity is a power of two.
 */
final class ShmByteRing {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final int TAIL = 0;
    private static final int HEAD = 128;
    private static final int STOP = 256;
    private static final int DATA = 4096;
    private static final int CHECK_EVERY_MASK = 0xffff;

    private final ByteBuffer shared;
    private final int capacity;
    private final int mask;
    // ---- producer thread only ----
    private long tail;
    private long headCache;
    // ---- consumer thread only ----
    private long head;
    private long tailCache;

    /**
     * A view over a mapping of at least {@link #bytes(int) bytes(capacity)}.
     *
     * @param shared the mapping
     * @param capacity the ring's data bytes, a power of two
     */
    ShmByteRing(ByteBuffer shared, int capacity) {
        if (Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity must be a power of two: " + capacity);
        }
        if (shared.capacity() < bytes(capacity)) {
            throw new IllegalArgumentException("mapping of " + shared.capacity() + " B, need " + bytes(capacity));
        }
        this.shared = shared;
        this.capacity = capacity;
        this.mask = capacity - 1;
    }

    /**
     * The mapping size a ring needs.
     *
     * @param capacity the data bytes
     * @return bytes
     */
    static int bytes(int capacity) {
        return DATA + capacity;
    }

    /**
     * Producer: waits for room, copies {@code length} bytes of {@code src} (from index 0) in and
     * publishes them.
     *
     * @param src the bytes
     * @param length how many, at most the capacity
     * @param consumerAlive asked now and then while waiting for room
     * @return false when the consumer went away first
     */
    boolean write(ByteBuffer src, int length, BooleanSupplier consumerAlive) {
        int spins = 0;
        while (capacity - (tail - headCache) < length) {
            headCache = (long) LONGS.getAcquire(shared, HEAD);
            if (capacity - (tail - headCache) >= length) {
                break;
            }
            Thread.onSpinWait();
            if ((++spins & CHECK_EVERY_MASK) == 0 && !consumerAlive.getAsBoolean()) {
                return false;
            }
        }
        int index = (int) (tail & mask);
        int first = Math.min(length, capacity - index);
        shared.put(DATA + index, src, 0, first);
        if (first < length) {
            shared.put(DATA, src, first, length - first);
        }
        tail += length;
        LONGS.setRelease(shared, TAIL, tail);
        return true;
    }

    /** Producer: tells the consumer to stop once it has read everything. */
    void stop() {
        LONGS.setRelease(shared, STOP, 1L);
    }

    /**
     * Consumer: copies everything written into {@code scratch}, a buffer-full at a time, until the
     * producer stops or {@code running} turns false.
     *
     * @param scratch the private buffer
     * @param running asked now and then while the ring is empty
     * @return bytes read
     */
    long drain(ByteBuffer scratch, BooleanSupplier running) {
        int chunk = scratch.capacity();
        int spins = 0;
        while (true) {
            if (tailCache == head) {
                tailCache = (long) LONGS.getAcquire(shared, TAIL);
                if (tailCache == head) {
                    if ((long) LONGS.getAcquire(shared, STOP) != 0 && (long) LONGS.getAcquire(shared, TAIL) == head) {
                        return head;
                    }
                    Thread.onSpinWait();
                    if ((++spins & CHECK_EVERY_MASK) == 0 && !running.getAsBoolean()) {
                        return head;
                    }
                    continue;
                }
            }
            int n = (int) Math.min(tailCache - head, chunk);
            int index = (int) (head & mask);
            int first = Math.min(n, capacity - index);
            scratch.put(0, shared, DATA + index, first);
            if (first < n) {
                scratch.put(first, shared, DATA, n - first);
            }
            head += n;
            LONGS.setRelease(shared, HEAD, head);
        }
    }
}
