package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import java.nio.ByteBuffer;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** SrcAvail / RDMA READ / RdmaRdCompl between two engines of this JVM, the basic cases. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZeroCopyTransferTest {
    static final SdpOptions OPTIONS = new SdpOptions().zcopyThreshold(64 * 1024);

    @Test
    void sendsDeviceMemoryByRdmaReadIntoADirectReaderBuffer() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(1 << 20);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
            Zio.readFully(b, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(1, a.stats().zeroCopyTransfers(), a.snapshot());
            assertEquals((1 << 20) - ZeroCopySettings.INLINE_BYTES_DEFAULT, a.stats().zeroCopyBytes(), a.snapshot());
            assertEquals((1 << 20) - ZeroCopySettings.INLINE_BYTES_DEFAULT, b.stats().zeroCopyBytes(), b.snapshot());
            a.close();
            b.close();
            assertTrue(a.awaitReleased(TimeUnit.SECONDS.toNanos(10)));
            assertTrue(b.awaitReleased(TimeUnit.SECONDS.toNanos(10)));
        }
    }

    @Test
    void heapReaderRefusesWithSendSmAndTheRestComesByBufferCopy() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(300_000);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocate(300_000);
            Zio.readFully(b, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(0, a.stats().zeroCopyTransfers(), a.snapshot());
            assertEquals(0, b.stats().zeroCopyBytes());
            assertTrue(a.snapshot().contains("fallbacks=1"), a.snapshot());
        }
    }

    /** A stream of writes at exactly the threshold, read as a sink does: no write waits for the 1 s advertisement timeout. */
    @Test
    void thresholdSizedWritesStreamWithoutWaitingForTheAdvertisementTimeout() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(64 * 1024);
            int writes = 300;
            Future<?> w = TestThreads.POOL.submit(() -> {
                for (int i = 0; i < writes; i++) {
                    src.clear();
                    Zio.writeFully(a, src);
                }
                a.shutdownOutput();
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(64 * 1024);
            long total = 0;
            long t0 = System.nanoTime();
            int n;
            while ((n = Zio.read(b, dst)) >= 0) {
                total += n;
                dst.clear();
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            w.get(30, TimeUnit.SECONDS);
            assertEquals(writes * 64L * 1024, total);
            assertEquals(writes, a.stats().zeroCopyTransfers(), a.snapshot());
            assertTrue(ms < 5_000, writes + " writes took " + ms + " ms: " + a.snapshot());
        }
    }

    /** Turning zero copy off while a zero-copy write waits for the reader sends none of its bytes twice. */
    @Test
    void turningZeroCopyOffDuringATransferSendsNoByteTwice() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(512 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                a.shutdownOutput();
                return null;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (b.available() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1); // the SrcAvail is here
            }
            a.zcopyThreshold(0);
            ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
            int n;
            while ((n = Zio.read(b, dst)) >= 0) {
                assertTrue(n >= 0);
            }
            w.get(30, TimeUnit.SECONDS);
            assertEquals(src.capacity(), dst.position(), "every byte once");
            Zio.check(dst, 0, dst.position(), 0);
            assertEquals(1, a.stats().zeroCopyTransfers(), a.snapshot());
        }
    }
}
