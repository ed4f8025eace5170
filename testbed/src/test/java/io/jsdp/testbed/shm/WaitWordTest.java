package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** WaitWord in one process: the doorbell is rung exactly when the waiter is armed, never lost. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WaitWordTest {
    private static final long LONG_NS = TimeUnit.SECONDS.toNanos(10);

    @TempDir
    Path tmp;
    private ShmNode node;

    private WaitWord word(ShmSettings settings) throws Exception {
        node = ShmNode.open(new Rendezvous(tmp.resolve("rv")), settings);
        WaitWord w = WaitWord.at(node, node.createSegment(4 * WaitWord.BYTES), WaitWord.BYTES);
        w.bindWaiter();
        return w;
    }

    @AfterEach
    void closeNode() {
        if (node != null) {
            node.close();
        }
    }

    private static void awaitArmed(WaitWord w) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!w.armed()) {
            assertTrue(System.nanoTime() < deadline, "waiter never armed");
            Thread.sleep(1);
        }
    }

    @Test
    void wakeDuringTheSpinWindowRingsNoDoorbell() throws Exception {
        WaitWord w = word(ShmSettings.defaults().withSpinNs(TimeUnit.SECONDS.toNanos(20)));
        long observed = w.sequence();
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> w.await(observed, LONG_NS));
        Thread.sleep(50); // the waiter is spinning (its window is 20 s)
        assertFalse(w.armed());
        assertFalse(w.wake());
        assertEquals(observed + 1, waiter.get(5, TimeUnit.SECONDS));
        assertEquals(0, w.doorbellsRung());
        assertEquals(0, node.doorbellsRung());
        assertEquals(0, w.parks());
    }

    @Test
    void wakeOfAnArmedWaiterRingsExactlyOneDoorbell() throws Exception {
        WaitWord w = word(ShmSettings.defaults().withSpinNs(0));
        long observed = w.sequence();
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> w.await(observed, LONG_NS));
        awaitArmed(w);
        assertTrue(w.wake());
        assertFalse(w.wake(), "the first wake took the arm");
        long s = waiter.get(5, TimeUnit.SECONDS);
        assertTrue(s == observed + 1 || s == observed + 2, Long.toString(s));
        assertEquals(1, w.doorbellsRung());
        assertEquals(1, node.doorbellsRung());
        assertEquals(1, node.doorbellsDelivered());
        assertEquals(0, w.safetyNetRescues());
        assertFalse(w.armed());
    }

    @Test
    void wakeWithNobodyWaitingRingsNothingAndIsSeenByTheNextWait() throws Exception {
        WaitWord w = word(ShmSettings.defaults().withSpinNs(0));
        long observed = w.sequence();
        assertFalse(w.wake());
        assertEquals(observed + 1, w.await(observed, LONG_NS));
        assertEquals(0, w.parks());
        assertEquals(0, node.doorbellsRung());
    }

    @Test
    void waitWithoutWakeTimesOutAndDisarms() throws Exception {
        WaitWord w = word(ShmSettings.defaults().withSpinNs(1_000).withParkSafetyNetMs(20));
        long t0 = System.nanoTime();
        assertEquals(WaitWord.TIMED_OUT, w.await(w.sequence(), TimeUnit.MILLISECONDS.toNanos(100)));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(100));
        assertFalse(w.armed());
        assertEquals(0, w.safetyNetRescues(), "nobody woke: running out the safety net is no rescue");
        assertTrue(w.parks() >= 2, "parks are capped by the safety net");
    }

    @Test
    void closingTheNodeReleasesAParkedWaiter() throws Exception {
        WaitWord w = word(ShmSettings.defaults().withSpinNs(0).withParkSafetyNetMs(60_000));
        CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> w.await(w.sequence(), LONG_NS));
        awaitArmed(w);
        node.close();
        assertEquals(WaitWord.CLOSED, waiter.get(5, TimeUnit.SECONDS));
    }

    @Test
    void interruptedWaiterReturnsAtOnce() throws Exception {
        WaitWord w = word(ShmSettings.defaults().withSpinNs(0));
        Thread.currentThread().interrupt();
        try {
            assertEquals(WaitWord.INTERRUPTED, w.await(w.sequence(), LONG_NS));
            assertTrue(Thread.currentThread().isInterrupted());
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void misalignedOrUnboundUseIsRefused() throws Exception {
        WaitWord w = word(ShmSettings.defaults());
        SharedSegment seg = node.createSegment(256);
        assertThrows(IllegalArgumentException.class, () -> WaitWord.at(node, seg, 8));
        assertThrows(IllegalArgumentException.class, () -> WaitWord.at(node, seg, 256));
        WaitWord unbound = WaitWord.at(node, seg, 64);
        assertThrows(IllegalStateException.class, () -> unbound.await(unbound.sequence(), 1_000_000));
        w.unbindWaiter();
    }

    /**
     * Style habit 9: the arm/wake race with many iterations. A waker thread and a waiter thread with
     * no spin window hand off 200,000 times through two words; every hand-off either finds the wake
     * already done or is rung awake, and none needs the safety net.
     */
    @Test
    void armVersusWakeRaceLosesNoWakeupInOneProcess() throws Exception {
        ShmSettings s = ShmSettings.defaults().withSpinNs(0);
        node = ShmNode.open(new Rendezvous(tmp.resolve("rv")), s);
        SharedSegment seg = node.createSegment(2 * WaitWord.BYTES);
        WaitWord a = WaitWord.at(node, seg, 0);
        WaitWord b = WaitWord.at(node, seg, WaitWord.BYTES);
        int rounds = 100_000;
        AtomicLong failures = new AtomicLong();
        CompletableFuture<Void> side = CompletableFuture.runAsync(() -> {
            b.bindWaiter();
            long observed = 0;
            for (int i = 0; i < rounds; i++) {
                long got = b.await(observed, LONG_NS);
                if (got < 0) {
                    failures.incrementAndGet();
                    return;
                }
                observed = got;
                a.wake();
            }
        });
        a.bindWaiter();
        long observed = 0;
        for (int i = 0; i < rounds && failures.get() == 0; i++) {
            b.wake();
            long got = a.await(observed, LONG_NS);
            assertTrue(got > 0, "round " + i + " status " + got);
            observed = got;
        }
        side.get(20, TimeUnit.SECONDS);
        assertEquals(0, failures.get());
        assertEquals(rounds, observed);
        assertEquals(0, a.safetyNetRescues() + b.safetyNetRescues());
        assertEquals(a.doorbellsRung() + b.doorbellsRung(), node.doorbellsDelivered());
    }
}
