package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import java.io.IOException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 9, acceptance 1 for SinkAvail in one JVM: the shared workload's writer (random sizes around
 * the threshold from device, plain direct and heap buffers, gathering writes, random pauses) against a
 * reader that holds its buffers as a blocking channel does ({@link Workload#readSink}: device buffers
 * advertised with SinkAvail, plain and heap ones copied into, random read timeouts that withdraw an
 * advertised buffer), every byte checked; SrcAvail and SinkAvail both in use, and no registration held
 * once the transfers ended, none at all once the stacks closed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SinkAvailIntegrityTest {
    static final int THRESHOLD = 64 * 1024;
    static final SdpOptions OPTIONS = new SdpOptions().zcopyThreshold(THRESHOLD);
    static final ZeroCopySettings QUICK_CANCEL = ZeroCopySettings.fromSystemProperties().withTimeoutsMs(20, 10_000, 10_000);

    @Test
    void randomSizesAroundTheThresholdAndReadersThatTimeOutKeepEveryByte() throws Exception {
        long seed = ZeroCopyIntegrityTest.seed();
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, QUICK_CANCEL)) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            Future<Long> w = TestThreads.POOL.submit(() -> Workload.write(a, z.zcA, THRESHOLD, 300, seed, 4));
            long[] read;
            try {
                read = Workload.readSink(b, z.zcB, THRESHOLD, seed + 1);
            } catch (IOException | AssertionError e) {
                throw new AssertionError("seed " + seed + "; writer " + (w.isDone() ? ZeroCopyIntegrityTest.writerOutcome(w)
                    : "running") + "\nwriter's end: " + a.snapshot() + "\nreader's end: " + b.snapshot(), e);
            }
            assertEquals(w.get(60, TimeUnit.SECONDS).longValue(), read[0], "seed " + seed);
            String source = a.snapshot();
            String sink = b.snapshot();
            assertTrue(SinkAvailTransferTest.count(source, "sinkWrites") > 0, "seed " + seed + ": no RDMA WRITE\n" + source);
            assertTrue(SinkAvailTransferTest.count(source, "transfers") > 0, "seed " + seed + ": no SrcAvail\n" + source);
            assertTrue(read[1] > 0, "seed " + seed + ": no read timed out");
            assertTrue(SinkAvailTransferTest.count(sink, "sinkCancels") > 0, "seed " + seed + ": no withdrawal\n" + sink);
            assertEquals(SinkAvailTransferTest.count(sink, "sinkCancels"), SinkAvailTransferTest.count(source, "cancelAcks"),
                "every SinkAvailCancel answered: " + source + "\n" + sink);
            assertTrue(a.stats().zeroCopyTransfers() > SinkAvailTransferTest.count(source, "transfers"), source);
            b.close();
            a.close();
            assertTrue(a.awaitReleased(TimeUnit.SECONDS.toNanos(10)), a.snapshot());
            assertTrue(b.awaitReleased(TimeUnit.SECONDS.toNanos(10)), b.snapshot());
            assertEquals(0, z.zcA.cacheStats().inUse(), z.zcA.describe());
            assertEquals(0, z.zcB.cacheStats().inUse(), z.zcB.describe());
            System.out.println("seed " + seed + ": " + read[1] + " reads timed out\n" + source + "\n" + sink);
        }
    }
}
