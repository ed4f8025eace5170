package io.jsdp.bench.cli;

import io.jsdp.Sdp;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * One end of a benchmark connection: whole-buffer reads and writes over a blocking channel, or
 * spinning over a non-blocking one ({@link Transport#poll()}).
 *
 * <p>Every connection starts with a {@link #HEADER_BYTES}-byte header from the client saying what the
 * server does with it: {@code mode, size, count, computeNs}, big-endian ints.
 */
final class Conn implements AutoCloseable {
    static final int HEADER_BYTES = 16;
    /** Echo every {@code size}-byte message (rr, rate). */
    static final int ECHO = 1;
    /** Read and drop everything; at EOF answer the byte count (8 bytes) (stream). */
    static final int SINK = 2;
    /** Read {@code count} messages of {@code size}, compute {@code computeNs}, send them back; repeat (progress). */
    static final int PROGRESS = 3;
    /** Answer one byte, then wait for EOF (connect). */
    static final int CONNECT = 4;

    final SocketChannel channel;
    private final boolean poll;

    Conn(SocketChannel channel, boolean poll) {
        this.channel = channel;
        this.poll = poll;
    }

    static ByteBuffer allocate(int bytes, boolean direct) {
        if (direct && Boolean.getBoolean(SdpVariant.DEVICE_MEMORY_PROP)) {
            return Sdp.allocateDirect(bytes); // device memory: what zero copy can advertise
        }
        return direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes);
    }

    /** Writes all of {@code b}'s remaining bytes. */
    void writeFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.write(b) == 0 && poll) {
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Fills {@code b}'s remaining space.
     *
     * @return false at EOF before the first byte
     * @throws EOFException at EOF after some of it
     */
    boolean readFully(ByteBuffer b) throws IOException {
        boolean any = false;
        while (b.hasRemaining()) {
            int n = channel.read(b);
            if (n < 0) {
                if (any) {
                    throw new EOFException("the peer closed in the middle of a message");
                }
                return false;
            }
            if (n > 0) {
                any = true;
            } else if (poll) {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    /** One read: bytes read, -1 at EOF (0 only when polling). */
    int read(ByteBuffer b) throws IOException {
        int n = channel.read(b);
        if (n == 0 && poll) {
            Thread.onSpinWait();
        }
        return n;
    }

    void writeHeader(int mode, int size, int count, int computeNs) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
        h.putInt(mode).putInt(size).putInt(count).putInt(computeNs).flip();
        writeFully(h);
    }

    /** Reads the header: null at EOF. */
    int[] readHeader() throws IOException {
        ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES);
        if (!readFully(h)) {
            return null;
        }
        h.flip();
        return new int[] {h.getInt(), h.getInt(), h.getInt(), h.getInt()};
    }

    /** Spins for {@code ns}: the fixed computation of the progress test. */
    static void compute(long ns) {
        if (ns <= 0) {
            return;
        }
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
