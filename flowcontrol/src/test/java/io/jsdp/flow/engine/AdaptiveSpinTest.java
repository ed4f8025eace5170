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
 * blocking ping-pong with the default spin window runs beside more busy threads than cores; a
 * spinner must see itself descheduled and turn spinning off, later looks must find the cores full
 * and keep it off, and once the busy threads end, spinning must resume.
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

            long refusals = g.refusals();
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
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (g.refusals() == refusals && System.nanoTime() - deadline < 0) {
                    pingPong(p.a, b, 200);
                }
                // spinning starts on and only a descheduled spinner turns it off: so some spinner saw
                // one (under this load, or earlier if the machine was busy before it)
                assertTrue(g.preemptions() > 0, "a spinner saw itself descheduled: " + g.describe());
                assertTrue(g.refusals() > refusals, "a look at the runnable threads kept spinning off: " + g.describe());
            } finally {
                loaded.set(false);
                for (Thread t : load) {
                    t.join();
                }
            }

            long resumes = g.resumes();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (g.resumes() == resumes && System.nanoTime() - deadline < 0) {
                pingPong(p.a, b, 200);
            }
            assertTrue(g.resumes() > resumes, "spinning resumed on the freed cores: " + g.describe());
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
