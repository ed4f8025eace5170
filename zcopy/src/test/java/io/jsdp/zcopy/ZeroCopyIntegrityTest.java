package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 9, acceptance 1 in one JVM: every byte checked while writes of random sizes around the
 * threshold go by zero copy or buffer copy, readers refuse (heap or small buffers), sources time out
 * and cancel, and peers close mid-transfer; no registration is held once the transfers ended, none at
 * all once the stacks closed (the devices' resource trackers, level ALL).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZeroCopyIntegrityTest {
    static final int THRESHOLD = 64 * 1024;
    static final SdpOptions OPTIONS = new SdpOptions().zcopyThreshold(THRESHOLD);
    /** Short source timeout so that a reader's pause cancels advertisements. */
    static final ZeroCopySettings QUICK_CANCEL = ZeroCopySettings.fromSystemProperties().withTimeoutsMs(20, 10_000, 10_000);

    static long seed() {
        return Long.getLong("jsdp.test.seed", System.nanoTime());
    }

    @Test
    void randomSizesAroundTheThresholdRandomReadersAndPausesKeepEveryByte() throws Exception {
        long seed = seed();
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, QUICK_CANCEL)) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer[] device = {z.zcA.allocateDirect(4 * THRESHOLD), z.zcA.allocateDirect(4 * THRESHOLD)};
            ByteBuffer plainDirect = ByteBuffer.allocateDirect(4 * THRESHOLD);
            ByteBuffer heap = ByteBuffer.allocate(4 * THRESHOLD);
            int writes = 300;
            SplittableRandom wr = new SplittableRandom(seed);
            long[] sizes = new long[writes];
            long total = 0;
            for (int i = 0; i < writes; i++) {
                sizes[i] = THRESHOLD / 2 + wr.nextInt(3 * THRESHOLD);
                total += sizes[i];
            }
            long streamBytes = total;
            Future<?> writer = TestThreads.POOL.submit(() -> {
                SplittableRandom r = new SplittableRandom(seed ^ 1);
                long offset = 0;
                for (int i = 0; i < writes; i++) {
                    int kind = r.nextInt(10);
                    ByteBuffer buf = kind < 7 ? device[kind & 1] : kind < 9 ? plainDirect : heap;
                    int len = (int) sizes[i];
                    int at = r.nextInt(buf.capacity() - len + 1);
                    buf.clear();
                    Zio.fill(buf, at, len, offset);
                    buf.position(at).limit(at + len);
                    if (r.nextInt(8) == 0) {
                        // a non-blocking writer: never zero copy, but it waits behind one in flight
                        while (buf.hasRemaining()) {
                            int n = a.write(buf);
                            if (n < 0) {
                                throw new IOException("write " + n);
                            }
                            if (n == 0) {
                                a.await(SdpConnection.OP_WRITE, Zio.STEP_NS);
                            }
                        }
                    } else {
                        Zio.writeFully(a, buf);
                    }
                    offset += len;
                }
                return null;
            });
            SplittableRandom rr = new SplittableRandom(seed ^ 2);
            ByteBuffer bigDirect = ByteBuffer.allocateDirect(3 * THRESHOLD);
            ByteBuffer bigHeap = ByteBuffer.allocate(3 * THRESHOLD);
            ByteBuffer small = ByteBuffer.allocateDirect(2048);
            long got = 0;
            while (got < streamBytes) {
                int kind = rr.nextInt(10);
                ByteBuffer dst = kind < 6 ? bigDirect : kind < 9 ? bigHeap : small;
                dst.clear();
                if (dst != small) {
                    dst.limit(1 + rr.nextInt(dst.capacity()));
                }
                if (rr.nextInt(15) == 0) {
                    Thread.sleep(40); // longer than the source's advertisement timeout: it cancels
                }
                int n;
                try {
                    n = Zio.read(b, dst);
                } catch (IOException e) {
                    throw new AssertionError("seed " + seed + " after " + got + " bytes; writer "
                        + (writer.isDone() ? "ended: " + writerOutcome(writer) : "running") + "\nwriter's end: "
                        + a.snapshot(), e);
                }
                assertTrue(n > 0, "EOF after " + got + " of " + streamBytes);
                Zio.check(dst, 0, n, got);
                got += n;
            }
            writer.get(60, TimeUnit.SECONDS);
            String snap = a.snapshot();
            assertTrue(a.stats().zeroCopyTransfers() > 0, "seed " + seed + ": no zero-copy transfer\n" + snap);
            assertTrue(count(snap, "fallbacks") > 0, "seed " + seed + ": no refusal happened\n" + snap);
            a.shutdownOutput();
            ByteBuffer one = ByteBuffer.allocate(1);
            assertEquals(SdpConnection.EOF, Zio.read(b, one));
            b.close();
            a.close();
            assertTrue(a.awaitReleased(TimeUnit.SECONDS.toNanos(10)), a.snapshot());
            assertTrue(b.awaitReleased(TimeUnit.SECONDS.toNanos(10)), b.snapshot());
            assertEquals(0, z.zcA.cacheStats().inUse(), z.zcA.describe());
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
            assertTrue(z.zcA.cacheStats().hits() > 0, "repeated writes of the device buffers hit the cache: " + z.zcA.describe());
        }
    }

    @Test
    void theSharedWorkloadWithGatheringWritesKeepsEveryByte() throws Exception {
        long seed = seed();
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, QUICK_CANCEL)) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            Future<Long> w = TestThreads.POOL.submit(() -> Workload.write(a, z.zcA, THRESHOLD, 200, seed));
            long read;
            try {
                read = Workload.read(b, THRESHOLD, seed + 1);
            } catch (IOException | AssertionError e) {
                throw new AssertionError("seed " + seed + "; writer " + (w.isDone() ? writerOutcome(w) : "running")
                    + "\nwriter's end: " + a.snapshot(), e);
            }
            assertEquals(w.get(60, TimeUnit.SECONDS).longValue(), read, "seed " + seed);
            String snap = a.snapshot();
            assertTrue(count(snap, "maxInFlight") > 1, "seed " + seed + ": several advertisements in flight\n" + snap);
            assertTrue(a.stats().zeroCopyTransfers() > 0, snap);
        }
    }

    @Test
    void gatheringWritesAdvertiseSeveralBuffersAtOnceAndARefusalVoidsTheLaterOnes() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer[] g = new ByteBuffer[4];
            long offset = 0;
            for (int k = 0; k < g.length; k++) {
                g[k] = z.zcA.allocateDirect(200_000);
                Zio.fill(g[k], 0, g[k].capacity(), offset);
                offset += g[k].capacity();
            }
            long total = offset;
            // a direct reader: all four read by RDMA, several advertised at once
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, g);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect((int) total);
            Zio.readFully(b, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(4, a.stats().zeroCopyTransfers(), a.snapshot());
            assertEquals(4, count(a.snapshot(), "maxInFlight"), a.snapshot());
            // a heap reader: the first is refused (SendSm), the other three voided, all by buffer copy
            for (ByteBuffer x : g) {
                x.clear();
            }
            long base = total;
            offset = base;
            for (ByteBuffer x : g) {
                Zio.fill(x, 0, x.capacity(), offset);
                offset += x.capacity();
            }
            Future<?> w2 = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, g);
                return null;
            });
            ByteBuffer heap = ByteBuffer.allocate((int) total);
            Zio.readFully(b, heap);
            w2.get(30, TimeUnit.SECONDS);
            Zio.check(heap, 0, heap.capacity(), base);
            assertEquals(4, a.stats().zeroCopyTransfers(), "nothing more by zero copy: " + a.snapshot());
            assertTrue(count(a.snapshot(), "fallbacks") >= 1, a.snapshot());
            assertTrue(count(b.snapshot(), "discards") >= 3, "the three after the refused one: " + b.snapshot());
        }
    }

    @Test
    void sourceTimesOutCancelsAndTheRestComesByBufferCopy() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, QUICK_CANCEL)) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(512 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            Thread.sleep(300); // the reader is late: the SrcAvail times out, SrcAvailCancel, SendSm
            ByteBuffer dst = ByteBuffer.allocateDirect(512 * 1024);
            Zio.readFully(b, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            String snap = a.snapshot();
            assertEquals(1, count(snap, "cancels"), snap);
            assertEquals(1, count(snap, "fallbacks"), snap);
            assertEquals(0, a.stats().zeroCopyTransfers(), snap);
        }
    }

    @Test
    void readerAbortingMidTransferFailsTheWriterAndFreesTheRegistration() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(8 << 20);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(64 * 1024);
            Zio.readFully(b, dst);
            Zio.check(dst, 0, dst.capacity(), 0);
            b.abort();
            ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IOException, e.toString());
            assertTrue(a.awaitReleased(TimeUnit.SECONDS.toNanos(10)), a.snapshot());
            assertEquals(0, z.zcA.cacheStats().inUse(), z.zcA.describe());
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
        }
    }

    @Test
    void writerClosingMidTransferResetsTheConnectionBeforeTheWriterReturns() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(1 << 20);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (b.available() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1); // the SrcAvail is here: the writer waits for our READ
            }
            assertTrue(b.available() > 0);
            a.close(); // a blocked zero-copy writer: the peer must not read its buffer after it returns
            assertThrows(ExecutionException.class, () -> w.get(30, TimeUnit.SECONDS));
            assertTrue(a.awaitReleased(TimeUnit.SECONDS.toNanos(10)), a.snapshot());
            ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
            int n;
            do {
                n = b.read(dst);
                if (n == 0) {
                    b.await(SdpConnection.OP_READ, Zio.STEP_NS);
                }
            } while (n >= 0);
            assertEquals(SdpConnection.FAILED, n, b.snapshot());
            Zio.check(dst, 0, dst.position(), 0); // whatever arrived is the stream's beginning
            assertEquals(0, z.zcA.cacheStats().inUse(), z.zcA.describe());
        }
    }

    @Test
    void repeatedWritesOfOneBufferRegisterItOnceAndFreeInvalidatesIt() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(256 * 1024);
            ByteBuffer dst = ByteBuffer.allocateDirect(256 * 1024);
            for (int i = 0; i < 20; i++) {
                long offset = (long) i * src.capacity();
                Zio.fill(src, 0, src.capacity(), offset);
                src.clear();
                Future<?> w = TestThreads.POOL.submit(() -> {
                    Zio.writeFully(a, src);
                    return null;
                });
                dst.clear();
                Zio.readFully(b, dst);
                w.get(30, TimeUnit.SECONDS);
                Zio.check(dst, 0, dst.capacity(), offset);
            }
            assertEquals(20, a.stats().zeroCopyTransfers(), a.snapshot());
            ZeroCopy.CacheStats sa = z.zcA.cacheStats();
            assertEquals(1, sa.misses(), z.zcA.describe());
            assertEquals(19, sa.hits(), z.zcA.describe());
            ZeroCopy.CacheStats sb = z.zcB.cacheStats();
            assertEquals(1, sb.misses(), "the reader's buffer too: " + z.zcB.describe());
            assertTrue(z.zcA.free(src));
            assertEquals(0, z.zcA.cacheStats().registrations(), z.zcA.describe());
        }
    }

    @Test
    void aZeroBudgetKeepsNoRegistrationAfterItsTransfer() throws Exception {
        ZeroCopySettings none = ZeroCopySettings.fromSystemProperties().withRegistrationBudget(0);
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, none)) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(256 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(256 * 1024);
            Zio.readFully(b, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(1, a.stats().zeroCopyTransfers());
            assertEquals(0, z.zcA.cacheStats().registrations(), z.zcA.describe());
            assertEquals(0, z.zcB.cacheStats().registrations(), z.zcB.describe());
        }
    }

    @Test
    void aPeerWithoutZeroCopyGetsBufferCopyOnly() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties(), null, false)) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(512 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(a, src);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(512 * 1024);
            Zio.readFully(b, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(0, a.stats().zeroCopyTransfers());
            assertTrue(!a.snapshot().contains("zcopy"), "zero copy was not negotiated: " + a.snapshot());
            assertEquals(0, z.zcA.cacheStats().misses());
        }
    }

    static String writerOutcome(Future<?> w) {
        try {
            w.get();
            return "ok";
        } catch (ExecutionException | InterruptedException e) {
            java.io.StringWriter sw = new java.io.StringWriter();
            e.getCause().printStackTrace(new java.io.PrintWriter(sw));
            return sw.toString();
        }
    }

    private static int count(String snapshot, String name) {
        Matcher m = Pattern.compile(name + "=(\\d+)").matcher(snapshot);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }
}
