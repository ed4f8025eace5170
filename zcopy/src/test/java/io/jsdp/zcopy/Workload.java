package io.jsdp.zcopy;

import io.jsdp.flow.engine.SdpConnection;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/**
 * The zero-copy integrity workload, the same in one JVM and across two: a writer of random sizes
 * around the threshold from device buffers (zero copy), plain direct and heap buffers (copy), and a
 * reader of random direct, heap and small buffers (the last two refuse with SendSm) with random pauses
 * (the source times out and cancels). Every byte is the stream pattern {@link Zio#at} of its offset.
 */
final class Workload {
    private Workload() {
    }

    /**
     * Writes {@code writes} chunks, then shuts the output down.
     *
     * @return bytes written
     */
    static long write(SdpConnection c, ZeroCopy zc, int threshold, int writes, long seed) throws Exception {
        return write(c, zc, threshold, writes, seed, 0);
    }

    /**
     * As above, pausing 1–3 ms before one write in {@code pauseOneIn} (0: never), so that a reader
     * holding its buffer ({@link #readSink}) times out and withdraws it now and then.
     *
     * @return bytes written
     */
    static long write(SdpConnection c, ZeroCopy zc, int threshold, int writes, long seed, int pauseOneIn) throws Exception {
        SplittableRandom r = new SplittableRandom(seed);
        SplittableRandom pauses = new SplittableRandom(seed ^ 0x5A5A);
        ByteBuffer[] device = {zc.allocateDirect(4 * threshold), zc.allocateDirect(4 * threshold),
            zc.allocateDirect(4 * threshold), zc.allocateDirect(4 * threshold)};
        ByteBuffer plainDirect = ByteBuffer.allocateDirect(4 * threshold);
        ByteBuffer heap = ByteBuffer.allocate(4 * threshold);
        long offset = 0;
        for (int i = 0; i < writes; i++) {
            if (pauseOneIn > 0 && pauses.nextInt(pauseOneIn) == 0) {
                Thread.sleep(1 + pauses.nextInt(3));
            }
            if (r.nextInt(4) == 0) {
                // a gathering write: several buffers advertised at once (asynchronous zero copy)
                ByteBuffer[] g = new ByteBuffer[2 + r.nextInt(3)];
                for (int k = 0; k < g.length; k++) {
                    ByteBuffer buf = k < 2 && r.nextInt(6) == 0 ? (k == 0 ? plainDirect : heap) : device[k];
                    int len = threshold / 2 + r.nextInt(3 * threshold);
                    int at = r.nextInt(buf.capacity() - len + 1);
                    buf.clear();
                    Zio.fill(buf, at, len, offset);
                    buf.position(at).limit(at + len);
                    g[k] = buf;
                    offset += len;
                }
                Zio.writeFully(c, g);
                continue;
            }
            int kind = r.nextInt(10);
            ByteBuffer buf = kind < 7 ? device[kind & 1] : kind < 9 ? plainDirect : heap;
            int len = threshold / 2 + r.nextInt(3 * threshold);
            int at = r.nextInt(buf.capacity() - len + 1);
            buf.clear();
            Zio.fill(buf, at, len, offset);
            buf.position(at).limit(at + len);
            Zio.writeFully(c, buf);
            offset += len;
        }
        c.shutdownOutput();
        for (ByteBuffer d : device) {
            zc.free(d);
        }
        return offset;
    }

    /**
     * Reads to EOF, checking every byte.
     *
     * @return bytes read
     */
    static long read(SdpConnection c, int threshold, long seed) throws IOException, InterruptedException {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer bigDirect = ByteBuffer.allocateDirect(3 * threshold);
        ByteBuffer bigHeap = ByteBuffer.allocate(3 * threshold);
        ByteBuffer small = ByteBuffer.allocateDirect(2048);
        long got = 0;
        for (;;) {
            int kind = r.nextInt(10);
            ByteBuffer dst = kind < 6 ? bigDirect : kind < 9 ? bigHeap : small;
            dst.clear();
            if (dst != small) {
                dst.limit(1 + r.nextInt(dst.capacity()));
            }
            if (r.nextInt(15) == 0) {
                Thread.sleep(40);
            }
            int n = Zio.read(c, dst);
            if (n == SdpConnection.EOF) {
                return got;
            }
            Zio.check(dst, 0, n, got);
            got += n;
        }
    }

    /**
     * Reads to EOF as a blocking channel reader does, holding its buffer ({@link SdpConnection#HOLDS_BUFFER}):
     * device buffers of random sizes around the threshold (advertised with SinkAvail when nothing is
     * queued), plain direct and heap ones (never advertised); one read in five with a short timeout
     * that withdraws an advertised buffer (SinkAvailCancel). Every byte checked.
     *
     * @return bytes read and, second, reads that timed out
     */
    static long[] readSink(SdpConnection c, ZeroCopy zc, int threshold, long seed) throws IOException, InterruptedException {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer[] device = {zc.allocateDirect(3 * threshold), zc.allocateDirect(3 * threshold)};
        ByteBuffer plainDirect = ByteBuffer.allocateDirect(3 * threshold);
        ByteBuffer heap = ByteBuffer.allocate(3 * threshold);
        long got = 0;
        long timeouts = 0;
        try {
            for (;;) {
                int kind = r.nextInt(10);
                ByteBuffer dst = kind < 7 ? device[kind & 1] : kind < 9 ? plainDirect : heap;
                int len = threshold / 2 + r.nextInt(2 * threshold);
                int at = r.nextInt(dst.capacity() - len + 1);
                dst.clear().position(at).limit(at + len);
                int n;
                if (r.nextInt(5) == 0) {
                    n = Zio.readHolding(c, dst, 100_000 + r.nextLong(2_000_000));
                    if (n == 0) {
                        timeouts++;
                        if (dst.position() != at) {
                            throw new AssertionError("a read that timed out moved the buffer");
                        }
                        continue;
                    }
                } else {
                    n = Zio.readHolding(c, dst);
                }
                if (n == SdpConnection.EOF) {
                    return new long[] {got, timeouts};
                }
                Zio.check(dst, at, n, got);
                got += n;
            }
        } finally {
            for (ByteBuffer d : device) {
                zc.free(d);
            }
        }
    }
}
