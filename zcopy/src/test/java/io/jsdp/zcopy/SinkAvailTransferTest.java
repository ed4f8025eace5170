package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import java.nio.ByteBuffer;
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
}
