package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 3 acceptance 3: wakeups across processes are never lost, and a parked waiter costs no CPU.
 * A hand-off is one wake seen by the other side's wait; a round trip is two.
 */
class CrossProcessWakeupTest {
    /** A wait longer than this is a lost wakeup, not a slow one. */
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    @TempDir
    Path tmp;

    /**
     * 100,000 hand-offs each way (measured at about 15 us each on the 2-core VM, so about 3 s: no
     * "slow" tag needed).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void hundredThousandCrossProcessWakeupsLoseNone() throws Exception {
        pingPong(200_000, 60);
    }

    /**
     * Parent and child hand a token back and forth through two wait words with a spin window of 0,
     * so a waiter that does not find the wake already done arms and parks and needs the doorbell.
     */
    private void pingPong(int handOffs, int boundSeconds) throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        int rounds = handOffs / 2;
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults().withSpinNs(0))) {
            SharedSegment seg = node.createSegment(2 * WaitWord.BYTES);
            WaitWord mine = WaitWord.at(node, seg, 0);
            WaitWord childs = WaitWord.at(node, seg, WaitWord.BYTES);
            mine.bindWaiter();
            try (ChildJvm child = ChildJvm.start("pingpong", r.directory().toString(), seg.name(), Integer.toString(rounds))) {
                child.awaitLine("READY", 30, TimeUnit.SECONDS);
                long observed = mine.sequence();
                long t0 = System.nanoTime();
                for (int i = 0; i < rounds; i++) {
                    childs.wake();
                    long s = mine.await(observed, WAIT_NS);
                    if (s < 0) {
                        fail("round " + i + ": wait ended with status " + s + " (a lost wakeup)");
                    }
                    observed = s;
                }
                long elapsedNs = System.nanoTime() - t0;
                Map<String, Long> c = counters(child.awaitLine("DONE", 30, TimeUnit.SECONDS));
                System.out.printf("%d cross-process hand-offs in %.1f ms: %.2f us per hand-off, %.0f hand-offs/s;"
                    + " parent parks %d, child parks %d, doorbells rung parent %d child %d%n", 2L * rounds,
                    elapsedNs / 1e6, elapsedNs / 1e3 / (2.0 * rounds), 2.0 * rounds * 1e9 / elapsedNs, mine.parks(),
                    c.get("parks"), childs.doorbellsRung(), c.get("rung"));
                assertEquals(0, mine.safetyNetRescues(), "parent waits rescued by the safety net");
                assertEquals(0, c.get("rescues"), "child waits rescued by the safety net");
                assertEquals(rounds, observed - 0, "every wake seen once");
                assertTrue(elapsedNs < TimeUnit.SECONDS.toNanos(boundSeconds), "took " + elapsedNs / 1_000_000 + " ms");
                assertTrue(mine.parks() + c.get("parks") > 0, "spin window 0: waiters park");
            }
        }
    }

    private static Map<String, Long> counters(String line) {
        Map<String, Long> m = new HashMap<>();
        for (String kv : line.split(" ")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(kv.substring(0, eq), Long.parseLong(kv.substring(eq + 1)));
            }
        }
        return m;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void parkedWaiterUsesUnderOnePercentOfACore() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        try (ChildJvm child = ChildJvm.start("park", r.directory().toString(), "5000")) {
            Map<String, Long> c = counters(child.awaitLine("CPU", 40, TimeUnit.SECONDS));
            double wallNs = c.get("wallNs");
            double processPct = 100.0 * c.get("processNs") / wallNs;
            double threadPct = 100.0 * c.get("threadNs") / wallNs;
            System.out.printf("parked %.2f s: waiter thread %.3f %% of a core, whole child JVM %.3f %%, parks %d%n",
                wallNs / 1e9, threadPct, processPct, c.get("parks"));
            assertEquals(WaitWord.TIMED_OUT, c.get("status"));
            assertTrue(wallNs >= TimeUnit.MILLISECONDS.toNanos(4_900), "parked the full 5 s");
            assertTrue(threadPct < 1.0, "waiter thread used " + threadPct + " % of a core");
            // The acceptance bound (1 %) is the parked waiter's; the whole JVM also runs GC, the JIT and the
            // node's liveness sweep, measured at 0.4-0.6 % here. 5 % still proves that nothing spins (a
            // spinning thread is ~100 %) without flaking on a loaded CI machine.
            assertTrue(processPct < 5.0, "child JVM used " + processPct + " % of a core while parked");
        }
    }
}
