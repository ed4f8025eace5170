package io.jsdp.flow.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/** Blocking reads and writes over the engine's non-blocking API, as the provider will do them. */
public final class Blocking {
    /** Longest a test waits for one step. */
    public static final long STEP_NS = TimeUnit.SECONDS.toNanos(30);

    private Blocking() {
    }

    /**
     * Writes all of {@code src}.
     *
     * @param c the connection
     * @param src the bytes
     * @throws IOException when the connection fails or a step times out
     */
    public static void writeFully(SdpConnection c, ByteBuffer src) throws IOException, InterruptedException {
        while (src.hasRemaining()) {
            int n = c.write(src);
            if (n < 0) {
                throw new IOException("write: " + n + " " + c.failureDetail());
            }
            if (n == 0 && c.await(SdpConnection.OP_WRITE, STEP_NS) == 0) {
                throw new IOException("write stalled 30 s: " + c.snapshot() + threads());
            }
        }
    }

    /**
     * Reads some bytes, waiting for at least one.
     *
     * @param c the connection
     * @param dst where to put them
     * @return bytes read, or {@link SdpConnection#EOF}
     * @throws IOException when the connection fails or a step times out
     */
    public static int read(SdpConnection c, ByteBuffer dst) throws IOException, InterruptedException {
        for (;;) {
            int n = c.read(dst);
            if (n > 0 || n == SdpConnection.EOF) {
                return n;
            }
            if (n < 0) {
                throw new IOException("read: " + n + " " + c.failureDetail());
            }
            if (c.await(SdpConnection.OP_READ, STEP_NS) == 0) {
                throw new IOException("read stalled 30 s: " + c.snapshot() + threads());
            }
        }
    }

    /** Every thread's stack, for a stall's report: where each side's threads wait. */
    static String threads() {
        StringBuilder b = new StringBuilder("threads:\n");
        for (java.util.Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            b.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            StackTraceElement[] st = e.getValue();
            for (int i = 0; i < Math.min(st.length, 20); i++) {
                b.append("    at ").append(st[i]).append('\n');
            }
        }
        return b.toString();
    }

    /**
     * Reads exactly {@code dst.remaining()} bytes.
     *
     * @param c the connection
     * @param dst where to put them
     * @throws IOException on EOF before the end, failure or a stalled step
     */
    public static void readFully(SdpConnection c, ByteBuffer dst) throws IOException, InterruptedException {
        while (dst.hasRemaining()) {
            if (read(c, dst) == SdpConnection.EOF) {
                throw new IOException("EOF with " + dst.remaining() + " bytes to go");
            }
        }
    }
}
