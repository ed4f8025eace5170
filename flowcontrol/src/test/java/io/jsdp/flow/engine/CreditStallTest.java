package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Credits bound what a writer can push at a reader that does not read, and nothing deadlocks. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CreditStallTest {
    private static final SdpOptions SMALL = new SdpOptions().bufferBytes(4096).receiveBuffers(4).sendBuffers(3);
    private static final int GOAL = 4096 - 16;

    /** Writes without blocking until write takes nothing for 200 ms; returns the bytes taken. */
    private static long fill(SdpConnection c) throws InterruptedException {
        long total = 0;
        ByteBuffer chunk = ByteBuffer.allocate(1000);
        long idleSince = System.nanoTime();
        while (System.nanoTime() - idleSince < TimeUnit.MILLISECONDS.toNanos(200)) {
            chunk.clear();
            int n = c.write(chunk);
            if (n > 0) {
                total += n;
                idleSince = System.nanoTime();
            } else {
                assertEquals(0, n, c.failureDetail());
                Thread.sleep(1);
            }
        }
        return total;
    }

    @Test
    void shouldStallSenderWhenRemoteCreditsExhausted() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL.copy())) {
            long taken = fill(p.a);
            // at most the peer's receive buffers and our send slots, one message of GOAL bytes each
            long most = (long) (4 + 3) * GOAL;
            assertTrue(taken <= most, "took " + taken + " > " + most);
            assertTrue(taken >= (long) 3 * GOAL, "took only " + taken);
            assertEquals(0, p.a.readyOps() & SdpConnection.OP_WRITE, "not writable while stalled");
            ByteBuffer one = ByteBuffer.allocate(GOAL);
            Blocking.readFully(p.b, one);
            assertTrue(p.a.await(SdpConnection.OP_WRITE, TimeUnit.SECONDS.toNanos(10)) != 0, p.a.snapshot());
            assertTrue(fill(p.a) > 0, "reading one buffer let the writer go on");
        }
    }

    @Test
    void twoWritersThatStopReadingResumeWhenOneReads() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL.copy())) {
            long byA = fill(p.a);
            long byB = fill(p.b);
            assertTrue(byA > 0 && byB > 0);
            // A now reads everything B sent, while B keeps writing 1 MiB more: credit updates must flow
            CompletableFuture<Long> reader = CompletableFuture.supplyAsync(() -> {
                ByteBuffer d = ByteBuffer.allocate(8192);
                long got = 0;
                try {
                    while (got < byB + (1 << 20)) {
                        d.clear();
                        int n = Blocking.read(p.a, d);
                        assertTrue(n > 0);
                        got += n;
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return got;
            }, TestThreads.POOL);
            Blocking.writeFully(p.b, ByteBuffer.allocate(1 << 20));
            assertEquals(byB + (1 << 20), reader.get(30, TimeUnit.SECONDS));
            // and B can still take everything A had queued
            ByteBuffer all = ByteBuffer.allocate((int) byA);
            Blocking.readFully(p.b, all);
        }
    }
}
