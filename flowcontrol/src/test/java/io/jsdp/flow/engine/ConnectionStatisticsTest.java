package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpConnection.ConnectionStats;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Per-connection counters and the stack's totals, which keep the counters of released connections. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionStatisticsTest {
    private static final SdpOptions SMALL = new SdpOptions().bufferBytes(4096).receiveBuffers(4).sendBuffers(3);
    private static final int GOAL = 4096 - 16;

    /** Writes without blocking until a write takes nothing, then retries a few times more; returns the bytes. */
    static long fillUntilStalled(SdpConnection c) throws InterruptedException {
        long total = 0;
        ByteBuffer chunk = ByteBuffer.allocate(1000);
        int zeros = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (zeros < 20 && System.nanoTime() < deadline) {
            chunk.clear();
            int n = c.write(chunk);
            assertTrue(n >= 0, c.failureDetail());
            if (n > 0) {
                total += n;
                zeros = 0;
            } else {
                zeros++;
                Thread.sleep(1);
            }
        }
        return total;
    }

    static void awaitReleased(SdpConnection c) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!c.isReleased()) {
            assertTrue(System.nanoTime() < deadline, c.snapshot());
            Thread.sleep(5);
        }
    }

    @Test
    void aCreditStallIsCountedOncePerStallWithItsDuration() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL.copy())) {
            assertEquals(0, p.a.stats().creditStalls());
            long first = fillUntilStalled(p.a);
            ConnectionStats s = p.a.stats();
            assertEquals(1, s.creditStalls(), "twenty writes that took nothing for want of credits are one stall: " + s);
            assertTrue(s.credits() <= 1, "credits at the stall: " + s);
            Thread.sleep(20);
            Blocking.readFully(p.b, ByteBuffer.allocate(GOAL));
            assertTrue(p.a.await(SdpConnection.OP_WRITE, TimeUnit.SECONDS.toNanos(10)) != 0, p.a.snapshot());
            long second = fillUntilStalled(p.a);
            assertTrue(second > 0, "reading one buffer let the writer go on");
            s = p.a.stats();
            assertEquals(2, s.creditStalls(), "the second stall: " + s);
            assertTrue(s.creditStallNs() >= TimeUnit.MILLISECONDS.toNanos(20), "the first stall lasted >= 20 ms: " + s);
            assertTrue(s.bytesSent() > 0 && s.bytesSent() <= first + second, "posted, not merely queued: " + s);
            assertEquals(0, p.b.stats().creditStalls(), "the reader never stalled");
            assertTrue(p.a.snapshot().contains("creditStalls=2"), p.a.snapshot());
        }
    }

    @Test
    void stackTotalsKeepTheCountersOfReleasedConnections() throws Exception {
        try (SdpPair p = SdpPair.open()) {
            Blocking.writeFully(p.a, ByteBuffer.allocate(100_000));
            Blocking.readFully(p.b, ByteBuffer.allocate(100_000));
            StackStatistics.Totals live = p.stackA.totals();
            assertEquals(1, live.opened());
            assertEquals(1, live.established());
            assertEquals(1, live.live());
            assertEquals(0, live.released());
            assertEquals(100_000, live.bytesSent());
            assertEquals(100_000, p.stackB.totals().bytesReceived());
            assertEquals(1, p.stackA.connections().size());

            ConnectionStats a = p.a.stats();
            p.a.close();
            p.b.close();
            awaitReleased(p.a);
            awaitReleased(p.b);
            StackStatistics.Totals after = p.stackA.totals();
            assertEquals(0, after.live());
            assertEquals(1, after.released());
            assertEquals(100_000, after.bytesSent(), "the released connection's bytes stay in the totals");
            assertTrue(after.messagesSent() > a.messagesSent(), "DisConn went after the data: " + after);
            assertTrue(after.failures().isEmpty(), after.toString());
            assertFalse(p.stackA.connections().contains(p.a));

            p.connect(new SdpOptions());
            Blocking.writeFully(p.a, ByteBuffer.allocate(1000));
            StackStatistics.Totals both = p.stackA.totals();
            assertEquals(2, both.opened());
            assertEquals(1, both.live());
            assertEquals(100_000 + 1000, both.bytesSent(), "released plus live");
        }
    }

    @Test
    void failuresAreCountedByKind() throws Exception {
        try (SdpPair p = SdpPair.open()) {
            p.a.abort();
            awaitReleased(p.a);
            StackStatistics.Totals t = p.stackA.totals();
            assertEquals(java.util.Map.of("ABORTED", 1L), t.failures(), t + "\n" + p.a.snapshot());
            assertEquals(1, t.released());
        }
    }
}
