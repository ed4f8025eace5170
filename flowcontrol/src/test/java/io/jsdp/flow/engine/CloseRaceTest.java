package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Races of close and abort against traffic (style habit 9): a writer and a reader on each end while a
 * third thread closes or aborts one end at a random moment. Every call must return a status (never
 * throw, never hang), both ends must end and free their resources, and the devices must report no
 * leaks (the fixture checks).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CloseRaceTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    /** Pumps until a negative status or EOF; returns the status that ended it. */
    private static int pump(SdpConnection c, boolean write) {
        ByteBuffer b = ByteBuffer.allocateDirect(3000);
        try {
            for (;;) {
                b.clear();
                int n = write ? c.write(b) : c.read(b);
                if (n < 0) {
                    return n;
                }
                if (n == 0) {
                    c.await(write ? SdpConnection.OP_WRITE : SdpConnection.OP_READ, TimeUnit.MILLISECONDS.toNanos(5));
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Integer.MIN_VALUE;
        }
    }

    @Test
    void closeAndAbortRacingTrafficAlwaysEndBothSides() throws Exception {
        SplittableRandom r = new SplittableRandom(42);
        SdpOptions small = new SdpOptions().bufferBytes(4096).receiveBuffers(4).sendBuffers(4).closeTimeoutMs(500);
        for (int round = 0; round < 40; round++) {
            try (SdpPair p = SdpPair.open(small, small.copy())) {
                CompletableFuture<Integer> aw = CompletableFuture.supplyAsync(() -> pump(p.a, true), TestThreads.POOL);
                CompletableFuture<Integer> ar = CompletableFuture.supplyAsync(() -> pump(p.a, false), TestThreads.POOL);
                CompletableFuture<Integer> bw = CompletableFuture.supplyAsync(() -> pump(p.b, true), TestThreads.POOL);
                CompletableFuture<Integer> br = CompletableFuture.supplyAsync(() -> pump(p.b, false), TestThreads.POOL);
                Thread.sleep(r.nextInt(5));
                SdpConnection victim = r.nextBoolean() ? p.a : p.b;
                SdpConnection other = victim == p.a ? p.b : p.a;
                switch (r.nextInt(3)) {
                    case 0 -> victim.close();
                    case 1 -> victim.abort();
                    default -> victim.shutdownOutput();
                }
                // the other side stops when it sees the end; then close both as an application would
                Thread.sleep(r.nextInt(3));
                other.close();
                victim.close();
                for (CompletableFuture<Integer> f : List.of(aw, ar, bw, br)) {
                    f.get(10, TimeUnit.SECONDS);
                }
                assertTrue(p.a.awaitReleased(WAIT_NS), p.a.snapshot());
                assertTrue(p.b.awaitReleased(WAIT_NS), p.b.snapshot());
            }
        }
    }
}
