package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spinning stops when the machine is oversubscribed and comes back when it is not (issue 27): a
 * blocking ping-pong with the default spin window spins on a quiet machine; beside more busy threads
 * than cores it must stop spinning (the governor's samples find no core for the peer, or a spinner
 * sees itself descheduled), and once the busy threads end, it must spin again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AdaptiveSpinTest {
    @Test
    void spinningStopsUnderOverloadAndResumesWhenTheCoresAreFree() throws Exception {
        SpinGovernor g = SpinGovernor.jvm();
        SdpOptions spinning = new SdpOptions().spinNs(SdpOptions.SPIN_NS_DEFAULT).noDelay(true);
        try (SdpPair p = SdpPair.open(spinning, spinning.copy())) {
            AtomicBoolean pinging = new AtomicBoolean(true);
            CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> echo(p.b, pinging), TestThreads.POOL);
            ByteBuffer b = ByteBuffer.allocateDirect(64);
            pingPong(p.a, b, 2_000); // warm: spinning pays on a quiet machine

            // once the JIT compilers (runnable threads too) are done, a quiet machine spins
            long quietBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long spunBefore = g.spins();
            while (g.spins() == spunBefore && System.nanoTime() - quietBy < 0) {
                pingPong(p.a, b, 200);
            }
            assertTrue(g.spins() > spunBefore, "a quiet machine spins: " + g.describe());
            long stopped = g.crowded() + g.refusals() + g.preemptions();
            AtomicBoolean loaded = new AtomicBoolean(true);
            List<Thread> load = new ArrayList<>();
            for (int i = 0; i <= Runtime.getRuntime().availableProcessors(); i++) {
                Thread t = new Thread(() -> {
                    long x = 0;
                    while (loaded.get()) {
                        x += System.nanoTime() & 1; // busy: never yields or sleeps
                    }
                    if (x == 42) {
                        Thread.onSpinWait();
                    }
                }, "busy-" + i);
                t.setDaemon(true);
                t.start();
                load.add(t);
            }
            try {
                // within the deadline, a stretch of 200 round trips in which no wait spins
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                long before;
                do {
                    before = g.spins();
                    pingPong(p.a, b, 200);
                } while (g.spins() != before && System.nanoTime() - deadline < 0);
                assertEquals(before, g.spins(), "spinning stopped under the load: " + g.describe());
                assertTrue(g.crowded() + g.refusals() + g.preemptions() > stopped,
                    "the governor said why: " + g.describe());
            } finally {
                loaded.set(false);
                for (Thread t : load) {
                    t.join();
                }
            }

            long spins = g.spins();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (g.spins() == spins && System.nanoTime() - deadline < 0) {
                pingPong(p.a, b, 200);
            }
            assertTrue(g.spins() > spins, "spinning resumed on the freed cores: " + g.describe());
            pinging.set(false);
            b.clear();
            b.putInt(0, -1);
            Blocking.writeFully(p.a, b);
            echo.get(30, TimeUnit.SECONDS);
        }
    }

    private static void pingPong(SdpConnection c, ByteBuffer b, int rounds) throws Exception {
        for (int i = 0; i < rounds; i++) {
            b.clear();
            b.putInt(0, i);
            Blocking.writeFully(c, b);
            b.clear();
            Blocking.readFully(c, b);
            assertEquals(i, b.getInt(0));
        }
    }

    private static void echo(SdpConnection c, AtomicBoolean pinging) {
        ByteBuffer b = ByteBuffer.allocateDirect(64);
        try {
            while (pinging.get()) {
                b.clear();
                Blocking.readFully(c, b);
                if (b.getInt(0) == -1) {
                    return;
                }
                b.flip();
                Blocking.writeFully(c, b);
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
