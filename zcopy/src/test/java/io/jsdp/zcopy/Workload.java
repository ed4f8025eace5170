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
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer[] device = {zc.allocateDirect(4 * threshold), zc.allocateDirect(4 * threshold),
            zc.allocateDirect(4 * threshold), zc.allocateDirect(4 * threshold)};
        ByteBuffer plainDirect = ByteBuffer.allocateDirect(4 * threshold);
        ByteBuffer heap = ByteBuffer.allocate(4 * threshold);
        long offset = 0;
        for (int i = 0; i < writes; i++) {
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
}
