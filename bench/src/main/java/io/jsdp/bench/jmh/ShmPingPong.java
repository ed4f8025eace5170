package io.jsdp.bench.jmh;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.BooleanSupplier;

/**
 * The raw latency baseline: a flag ping-pong over shared memory with both sides spinning and the
 * payload copied in and out as a socket would (four copies per round trip), the method of
 * {@code ../shared/reference/performance-baselines.md} (64 B p50 ≈ 0.23 µs there). Nothing of the
 * project runs in it: it is the floor the verbs figure is read against.
 *
 * <pre>
 *   0              64                    half           half + 64
 *   +--------------+---------------------+--------------+---------------------+
 *   | ping seq (8) | ping payload (size) | pong seq (8) | pong payload (size) |
 *   +--------------+---------------------+--------------+---------------------+
 *   half = size + 64 rounded up to a page, so the two directions share no cache line
 * </pre>
 *
 * Sequence numbers are native-order longs. The initiator copies its payload in and stores the ping
 * sequence with release; the echo side's acquire load of it makes the payload visible, it copies the
 * payload out, copies it into the pong payload and stores the pong sequence with release, which the
 * initiator's acquire load pairs with before it copies the answer out. A ping sequence of
 * {@link #STOP} ends the echo.
 */
final class ShmPingPong {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final int PAGE = 4096;
    private static final int PING_SEQ = 0;
    private static final int PING_PAYLOAD = 64;
    private static final long STOP = -1;
    /** How many empty polls between two looks at whether the other side is still there. */
    private static final int CHECK_EVERY_MASK = 0xffff;

    private final ByteBuffer shared;
    private final int size;
    private final int pongSeq;
    private final int pongPayload;
    /** The initiator's last ping; owned by the initiating thread. */
    private long sequence;

    /**
     * A view over a mapping of at least {@link #bytes(int) bytes(size)}.
     *
     * @param shared the mapping
     * @param size the payload size
     */
    ShmPingPong(ByteBuffer shared, int size) {
        if (shared.capacity() < bytes(size)) {
            throw new IllegalArgumentException("mapping of " + shared.capacity() + " B, need " + bytes(size));
        }
        this.shared = shared;
        this.size = size;
        this.pongSeq = half(size);
        this.pongPayload = pongSeq + PING_PAYLOAD;
    }

    private static int half(int size) {
        return (PING_PAYLOAD + size + PAGE - 1) / PAGE * PAGE;
    }

    /**
     * The mapping size a payload size needs.
     *
     * @param size the payload size
     * @return bytes
     */
    static int bytes(int size) {
        return 2 * half(size);
    }

    /**
     * One round trip, initiator side: copies {@code src} in, signals, spins for the answer and copies
     * it into {@code dst}.
     *
     * @param src the payload, {@code size} bytes from index 0
     * @param dst receives the answer at index 0
     * @param peerAlive asked now and then while spinning
     * @return false when the peer went away before answering
     */
    boolean roundTrip(ByteBuffer src, ByteBuffer dst, BooleanSupplier peerAlive) {
        long seq = ++sequence;
        shared.put(PING_PAYLOAD, src, 0, size);
        LONGS.setRelease(shared, PING_SEQ, seq);
        int spins = 0;
        while ((long) LONGS.getAcquire(shared, pongSeq) != seq) {
            Thread.onSpinWait();
            if ((++spins & CHECK_EVERY_MASK) == 0 && !peerAlive.getAsBoolean()) {
                return false;
            }
        }
        dst.put(0, shared, pongPayload, size);
        return true;
    }

    /** Tells the echo side to stop (initiator side). */
    void stop() {
        LONGS.setRelease(shared, PING_SEQ, STOP);
    }

    /**
     * Echo side: answers pings until {@link #stop()} or until {@code running} turns false.
     *
     * @param scratch the private buffer the payload passes through, at least {@code size} bytes
     * @param running asked now and then while spinning
     * @return round trips answered
     */
    long echo(ByteBuffer scratch, BooleanSupplier running) {
        // Not the current value: the initiator may have pinged before this loop began. Its first
        // ping is 1 on a fresh (zeroed) mapping.
        long last = 0;
        long answered = 0;
        int spins = 0;
        while (true) {
            long seq = (long) LONGS.getAcquire(shared, PING_SEQ);
            if (seq == last) {
                Thread.onSpinWait();
                if ((++spins & CHECK_EVERY_MASK) == 0 && !running.getAsBoolean()) {
                    return answered;
                }
                continue;
            }
            if (seq == STOP) {
                return answered;
            }
            scratch.put(0, shared, PING_PAYLOAD, size);
            shared.put(pongPayload, scratch, 0, size);
            LONGS.setRelease(shared, pongSeq, seq);
            last = seq;
            answered++;
        }
    }
}
