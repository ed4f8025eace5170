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

/**
 * A source that aborts while its SrcAvail waits for the sink's reader: the sink has the inline bytes, the
 * rest is in the aborted peer's memory. The reader gets what arrived, then the reset, at once — it must
 * not RDMA-READ from the aborted peer and wait for the READ's timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SourceAbortTest {
    static final SdpOptions OPTIONS = new SdpOptions().zcopyThreshold(64 * 1024);

    @Test
    void aReaderOfASrcAvailWhoseSourceAbortedGetsTheInlineBytesThenTheResetAtOnce() throws Exception {
        try (ZcopyPair z = ZcopyPair.open(OPTIONS, ZeroCopySettings.fromSystemProperties())) {
            SdpConnection a = z.pair.a;
            SdpConnection b = z.pair.b;
            ByteBuffer src = z.zcA.allocateDirect(1 << 20);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                try {
                    Zio.writeFully(a, src);
                } catch (java.io.IOException expected) {
                    // aborted below
                }
                return null;
            });
            assertTrue((b.await(SdpConnection.OP_READ, TimeUnit.SECONDS.toNanos(10)) & SdpConnection.OP_READ) != 0, b.snapshot());
            Thread.sleep(100); // the SrcAvail is in
            a.abort();
            w.get(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (b.state() == SdpConnection.State.ESTABLISHED && System.nanoTime() - deadline < 0) {
                b.await(SdpConnection.OP_ENDED, TimeUnit.MILLISECONDS.toNanos(10));
            }
            assertEquals(SdpConnection.State.FINISHED, b.state(), "kept for the reader: " + b.failureDetail());
            ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
            long t0 = System.nanoTime();
            int n;
            long got = 0;
            do {
                n = b.read(dst);
                if (n > 0) {
                    got += n;
                } else if (n == 0) {
                    b.await(SdpConnection.OP_READ, TimeUnit.SECONDS.toNanos(30));
                }
            } while (n >= 0 && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(40));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(ZeroCopySettings.INLINE_BYTES_DEFAULT, got, "the SrcAvail's inline bytes");
            Zio.check(dst, 0, (int) got, 0);
            assertEquals(SdpConnection.FAILED, n, "a reset after the data: " + b.failureDetail());
            assertTrue(ms < 5_000, "the reset took " + ms + " ms");
        }
    }
}
