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

    /**
     * A blocked writer is advised to poll through the expected transfer time ({@link SpinAdvisor}); with
     * every RDMA READ delayed 20 ms by the device, polling (at most 1 ms beyond the spin window) never sees
     * the transfer end, so each advice is a miss and the advice turns itself off for a while. The delay is
     * counted from the SrcAvail's post and the polling from the writer's wait: this holds unless the
     * writer is descheduled for 19 ms between the two (with 3 ms, a JDK 25 CI run next to a build on the
     * 2 CPUs once saw an advice pay).
     */
    @Test
    void writerIsAdvisedToPollAndBacksOffWhenPollingDoesNotPay() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            z.pair.deviceB.faults().readDelayNs(TimeUnit.MILLISECONDS.toNanos(20));
            ByteBuffer src = z.zcA.allocateDirect(64 * 1024);
            int writes = 8;
            Future<?> w = TestThreads.POOL.submit(() -> {
                for (int i = 0; i < writes; i++) {
                    src.clear();
                    Zio.fill(src, 0, src.capacity(), (long) i * src.capacity());
                    Zio.writeFully(a, src);
                }
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(64 * 1024);
            for (int i = 0; i < writes; i++) {
                dst.clear();
                Zio.readFully(b, dst);
                Zio.check(dst, 0, dst.capacity(), (long) i * dst.capacity());
            }
            w.get(30, TimeUnit.SECONDS);
            z.pair.deviceB.faults().readDelayNs(0);
            assertEquals(writes, a.stats().zeroCopyTransfers(), a.snapshot());
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("advices=(\\d+) misses=(\\d+)").matcher(a.snapshot());
            assertTrue(m.find(), a.snapshot());
            long advices = Long.parseLong(m.group(1));
            long misses = Long.parseLong(m.group(2));
            assertTrue(advices >= 2, "advised from the second transfer on, between back-offs: " + a.snapshot());
            assertEquals(advices, misses, "20 ms READs outlast 1 ms of polling: " + a.snapshot());
            assertTrue(advices < writes - 1, "a miss turns the advice off for the next transfer(s): " + a.snapshot());
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
