package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.Failure;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SinkAvail / RDMA WRITE in one JVM (issue 9): a blocked reader's device buffer is advertised and the
 * next blocking write lands in it; a stream message voids it; a reader that times out withdraws it;
 * a close while it is advertised resets; a peer without the capability never sees SinkAvail.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SinkAvailTransferTest {
    static final int THRESHOLD = 64 * 1024;
    static final SdpOptions OPTIONS = new SdpOptions().zcopyThreshold(THRESHOLD);

    static int count(String snapshot, String name) {
        Matcher m = Pattern.compile(name + "=(\\d+)").matcher(snapshot);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, what);
            Thread.sleep(1);
        }
    }

    @Test
    void aBlockedReadersDeviceBufferReceivesTheNextWriteByRdmaWrite() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer dst = z.zcB.allocateDirect(256 * 1024);
            Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(b, dst));
            await(() -> count(a.snapshot(), "peerAdverts") == 1, "the reader's SinkAvail reached the writer");
            ByteBuffer src = ByteBuffer.allocateDirect(300 * 1024); // any direct buffer: we write, the sink's is device memory
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            int n = r.get(30, TimeUnit.SECONDS);
            assertEquals(256 * 1024, n, "the advertised buffer filled by one RDMA WRITE: " + b.snapshot());
            Zio.check(dst, 0, n, 0);
            ByteBuffer rest = ByteBuffer.allocateDirect(64 * 1024);
            Zio.readFully(b, rest.limit(src.capacity() - n));
            Zio.check(rest, 0, rest.limit(), n);
            w.get(30, TimeUnit.SECONDS);
            assertEquals(1, a.stats().zeroCopyTransfers(), a.snapshot());
            assertEquals(256 * 1024, a.stats().zeroCopyBytes(), a.snapshot());
            assertEquals(256 * 1024, b.stats().zeroCopyBytes(), b.snapshot());
            assertEquals(1, count(b.snapshot(), "writes"), b.snapshot());
            assertEquals(0, z.zcA.cacheStats().inUse(), z.zcA.describe());
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
        }
    }

    /**
     * A writer that breaks the contract and comes back with another buffer after its RDMA WRITE
     * completed is told only what that buffer's position advanced over, as with SrcAvail (review of
     * issue 9, finding 9: it was told the WRITE's bytes, its buffer untouched).
     */
    @Test
    void aWriterComingBackWithAnotherBufferIsToldOnlyWhatItsPositionAdvanced() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer dst = z.zcB.allocateDirect(128 * 1024);
            Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(b, dst));
            await(() -> count(a.snapshot(), "peerAdverts") == 1, "the reader's SinkAvail reached the writer");
            ByteBuffer src = ByteBuffer.allocateDirect(128 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            assertEquals(0, a.write(src, SdpConnection.HOLDS_BUFFER), "the RDMA WRITE runs");
            assertEquals(128 * 1024, r.get(30, TimeUnit.SECONDS).intValue());
            await(() -> a.snapshot().contains("sinkAvail writer DONE"), "the writer's WRITE completed");
            ByteBuffer other = ByteBuffer.allocateDirect(1000);
            Zio.fill(other, 0, other.capacity(), 128 * 1024);
            int n = a.write(other, SdpConnection.HOLDS_BUFFER);
            assertEquals(other.position(), n, "the count is what the buffer's position advanced over");
            assertEquals(0, src.position(), "the first buffer is not touched");
            assertFalse(a.snapshot().contains("sinkAvail writer DONE"), a.snapshot());
        }
    }

    @Test
    void aStreamMessageVoidsTheAdvertisementAndTheReadGoesOnByBufferCopy() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer dst = z.zcB.allocateDirect(128 * 1024);
            Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(b, dst));
            await(() -> count(a.snapshot(), "peerAdverts") == 1, "the reader's SinkAvail reached the writer");
            ByteBuffer heap = ByteBuffer.allocate(1000); // heap: copied, its Data voids the advertisement
            Zio.fill(heap, 0, heap.capacity(), 0);
            Zio.writeFully(a, heap);
            int n = r.get(30, TimeUnit.SECONDS);
            assertEquals(1000, n);
            Zio.check(dst, 0, n, 0);
            assertEquals(1, count(b.snapshot(), "voided"), b.snapshot());
            assertEquals(0, a.stats().zeroCopyTransfers(), a.snapshot());
            // the next blocked read advertises again and the next direct write uses it
            dst.clear();
            Future<Integer> r2 = TestThreads.POOL.submit(() -> Zio.readHolding(b, dst));
            await(() -> count(a.snapshot(), "peerAdverts") == 2, "the second SinkAvail reached the writer");
            ByteBuffer src = ByteBuffer.allocateDirect(100_000);
            Zio.fill(src, 0, src.capacity(), 1000);
            Zio.writeFully(a, src);
            assertEquals(100_000, r2.get(30, TimeUnit.SECONDS).intValue());
            Zio.check(dst, 0, 100_000, 1000);
            assertEquals(1, a.stats().zeroCopyTransfers(), a.snapshot());
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
        }
    }

    @Test
    void aReaderThatTimesOutWithdrawsItsBufferBeforeItReturns() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer dst = z.zcB.allocateDirect(128 * 1024);
            assertEquals(0, Zio.readHolding(b, dst, TimeUnit.MILLISECONDS.toNanos(50)), "nothing came: a timeout");
            String sink = b.snapshot();
            assertEquals(1, count(sink, "sinkCancels"), sink);
            assertTrue(sink.contains("sinkAvail reader IDLE"), "the buffer is ours again when the read returns: " + sink);
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
            await(() -> count(a.snapshot(), "cancelAcks") == 1, "the writer answered the cancel");
            assertFalse(a.snapshot().contains("sinkAdverts=1"), "the writer dropped the advertisement: " + a.snapshot());
            // what comes next goes by buffer copy into whatever the reader offers
            ByteBuffer src = ByteBuffer.allocateDirect(100_000);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            ByteBuffer heap = ByteBuffer.allocate(100_000);
            Zio.readFully(b, heap);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(heap, 0, heap.capacity(), 0);
            assertEquals(0, a.stats().zeroCopyTransfers(), a.snapshot());
            for (int i = 0; i < 64; i++) {
                dst.clear(); // withdrawn, then advertised again: the registration cache keeps one
                assertEquals(0, Zio.readHolding(b, dst, TimeUnit.MILLISECONDS.toNanos(1)));
            }
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
        }
    }

    @Test
    void closingWhileTheReadBufferIsAdvertisedResetsTheConnection() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer dst = z.zcB.allocateDirect(128 * 1024);
            Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(b, dst));
            await(() -> count(a.snapshot(), "peerAdverts") == 1, "the reader's SinkAvail reached the writer");
            b.close(); // the peer could write the buffer after the reader returned: reset instead
            ExecutionException e = assertThrows(ExecutionException.class, () -> r.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IOException, e.toString());
            assertEquals(Failure.ABORTED, b.failure(), b.failureDetail());
            assertTrue(b.failureDetail().contains("advertised"), b.failureDetail());
            assertTrue(b.awaitReleased(TimeUnit.SECONDS.toNanos(10)));
            assertTrue(a.await(SdpConnection.OP_ENDED, TimeUnit.SECONDS.toNanos(10)) != 0, a.snapshot());
            assertEquals(Failure.RESET_BY_PEER, a.failure(), a.failureDetail());
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
        }
    }

    @Test
    void theWriterClosingAroundItsRdmaWriteGivesTheReaderAllOrAResetAndFreesEverything() throws Exception {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(ZeroCopyIntegrityTest.seed());
        for (int i = 0; i < 10; i++) {
            try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
                SdpConnection a = z.pair.a;
                SdpConnection b = z.pair.b;
                ByteBuffer dst = z.zcB.allocateDirect(4 << 20);
                Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(b, dst));
                await(() -> count(a.snapshot(), "peerAdverts") == 1, "the reader's SinkAvail reached the writer");
                ByteBuffer src = ByteBuffer.allocateDirect(4 << 20);
                Zio.fill(src, 0, src.capacity(), 0);
                Future<?> w = TestThreads.POOL.submit(() -> {
                    Zio.writeFully(a, src);
                    return null;
                });
                java.util.concurrent.locks.LockSupport.parkNanos(rnd.nextLong(2_000_000));
                a.close(); // before, during or after the WRITE
                try {
                    w.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof IOException, e.toString());
                }
                try {
                    int n = r.get(30, TimeUnit.SECONDS);
                    assertTrue(n == SdpConnection.EOF || n == dst.capacity(), "all of it or EOF: " + n);
                    if (n > 0) {
                        Zio.check(dst, 0, n, 0);
                    }
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof IOException, e.toString()); // the reset of a close during the WRITE
                }
                b.abort();
                assertTrue(a.awaitReleased(TimeUnit.SECONDS.toNanos(10)), a.snapshot());
                assertTrue(b.awaitReleased(TimeUnit.SECONDS.toNanos(10)), b.snapshot());
                assertEquals(0, z.zcA.cacheStats().inUse(), z.zcA.describe());
                assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
            }
        }
    }

    @Test
    void aPeerWithoutTheSinkAvailBitNeverReceivesSinkAvailAndSrcAvailStillWorks() throws Exception {
        for (boolean readerOffers : new boolean[] {false, true}) {
            // B reads; either B does not offer SinkAvail, or B does and A (the writer) does not
            try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties(), ZeroCopySettings.fromSystemProperties(),
                true, readerOffers, !readerOffers)) {
                SdpConnection a = z.pair.a;
                SdpConnection b = z.pair.b;
                ByteBuffer dst = z.zcB.allocateDirect(256 * 1024);
                Future<Integer> r = TestThreads.POOL.submit(() -> {
                    int got = 0;
                    while (dst.hasRemaining()) {
                        got += Zio.readHolding(b, dst);
                    }
                    return got;
                });
                Thread.sleep(50); // time for a SinkAvail that must not come
                ByteBuffer src = z.zcA.allocateDirect(256 * 1024);
                Zio.fill(src, 0, src.capacity(), 0);
                Zio.writeFully(a, src);
                assertEquals(256 * 1024, r.get(30, TimeUnit.SECONDS).intValue());
                Zio.check(dst, 0, dst.capacity(), 0);
                assertFalse(a.snapshot().contains("sinkAvail"), "not negotiated: " + a.snapshot());
                assertFalse(b.snapshot().contains("sinkAvail"), "not negotiated: " + b.snapshot());
                assertEquals(1, a.stats().zeroCopyTransfers(), "SrcAvail did it: " + a.snapshot());
            }
        }
    }
}
