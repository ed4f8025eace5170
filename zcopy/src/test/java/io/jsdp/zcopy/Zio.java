package io.jsdp.zcopy;

import io.jsdp.flow.engine.SdpConnection;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/** Blocking writes as the provider's blocking channel does them (holding the buffer), and reads. */
final class Zio {
    static final long STEP_NS = TimeUnit.SECONDS.toNanos(30);

    private Zio() {
    }

    /** Writes all of {@code src} with {@link SdpConnection#HOLDS_BUFFER}, as a blocking channel does. */
    static void writeFully(SdpConnection c, ByteBuffer src) throws IOException, InterruptedException {
        while (src.hasRemaining()) {
            int n = c.write(src, SdpConnection.HOLDS_BUFFER);
            if (n < 0) {
                throw new IOException("write: " + n + " " + c.failureDetail());
            }
            if (n == 0 && c.await(SdpConnection.OP_WRITE, STEP_NS) == 0) {
                throw new IOException("write stalled 30 s: " + c.snapshot());
            }
        }
    }

    /** A blocking gathering write: {@link SdpConnection#write(ByteBuffer[], int, int, int)} with HOLDS_BUFFER until all is written. */
    static void writeFully(SdpConnection c, ByteBuffer[] srcs) throws IOException, InterruptedException {
        for (;;) {
            long n = c.write(srcs, 0, srcs.length, SdpConnection.HOLDS_BUFFER);
            if (n < 0) {
                throw new IOException("write: " + n + " " + c.failureDetail());
            }
            boolean left = false;
            for (ByteBuffer b : srcs) {
                left |= b.hasRemaining();
            }
            if (!left) {
                return;
            }
            if (n == 0 && c.await(SdpConnection.OP_WRITE, STEP_NS) == 0) {
                throw new IOException("write stalled 30 s: " + c.snapshot());
            }
        }
    }

    /** Reads at least one byte, or EOF. */
    static int read(SdpConnection c, ByteBuffer dst) throws IOException, InterruptedException {
        for (;;) {
            int n = c.read(dst);
            if (n > 0 || n == SdpConnection.EOF) {
                return n;
            }
            if (n < 0) {
                throw new IOException("read: " + n + " " + c.failureDetail());
            }
            if (c.await(SdpConnection.OP_READ, STEP_NS) == 0) {
                throw new IOException("read stalled 30 s: " + c.snapshot());
            }
        }
    }

    /**
     * Reads at least one byte, or EOF, as the provider's blocking channel read does: holding {@code dst}
     * ({@link SdpConnection#HOLDS_BUFFER}), so the peer may RDMA-write into it (SinkAvail).
     */
    static int readHolding(SdpConnection c, ByteBuffer dst) throws IOException, InterruptedException {
        int n = readHolding(c, dst, STEP_NS);
        if (n == 0) {
            throw new IOException("read stalled 30 s: " + c.snapshot());
        }
        return n;
    }

    /**
     * A timed blocking read holding {@code dst}, as the provider's {@code SO_TIMEOUT} read: when the time
     * runs out it withdraws the buffer ({@link SdpConnection#cancelRead}).
     *
     * @return bytes read, EOF, or 0 when the time ran out (nothing came)
     */
    static int readHolding(SdpConnection c, ByteBuffer dst, long timeoutNs) throws IOException, InterruptedException {
        long start = System.nanoTime();
        for (;;) {
            int n = c.read(dst, SdpConnection.HOLDS_BUFFER);
            if (n > 0 || n == SdpConnection.EOF) {
                return n;
            }
            if (n < 0) {
                throw new IOException("read: " + n + " " + c.failureDetail());
            }
            long left = timeoutNs - (System.nanoTime() - start);
            if (left <= 0 || c.await(SdpConnection.OP_READ, left) == 0) {
                n = c.cancelRead(dst);
                if (n < 0) {
                    throw new IOException("cancelRead: " + n + " " + c.failureDetail());
                }
                return n;
            }
        }
    }

    static void readFully(SdpConnection c, ByteBuffer dst) throws IOException, InterruptedException {
        while (dst.hasRemaining()) {
            if (read(c, dst) == SdpConnection.EOF) {
                throw new IOException("EOF with " + dst.remaining() + " bytes to go");
            }
        }
    }

    /** The stream's byte at offset {@code i}: a pattern no two nearby offsets share. */
    static byte at(long i) {
        long x = i * 0x9E3779B97F4A7C15L;
        return (byte) (x >>> 56 ^ i);
    }

    static void fill(ByteBuffer b, int from, int len, long streamOffset) {
        for (int i = 0; i < len; i++) {
            b.put(from + i, at(streamOffset + i));
        }
    }

    /** Checks {@code len} bytes of {@code b} from {@code from} against the stream at {@code streamOffset}. */
    static void check(ByteBuffer b, int from, int len, long streamOffset) {
        for (int i = 0; i < len; i++) {
            if (b.get(from + i) != at(streamOffset + i)) {
                throw new AssertionError("stream byte " + (streamOffset + i) + " is " + b.get(from + i) + ", expected "
                    + at(streamOffset + i));
            }
        }
    }
}
