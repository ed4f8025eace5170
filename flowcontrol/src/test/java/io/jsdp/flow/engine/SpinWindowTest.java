package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A connection's spin window follows how its waits ended (issue 27: spin only when it pays). */
class SpinWindowTest {
    @Test
    void keepsTheWholeWindowWhileWaitsEndInsideIt() {
        SpinWindow w = new SpinWindow(20_000);
        for (int i = 0; i < 100; i++) {
            assertEquals(20_000, w.next());
            w.hit();
        }
    }

    @Test
    void halvesOnEachMissThenParksAtOnceExceptForProbes() {
        SpinWindow w = new SpinWindow(20_000);
        long[] expected = {20_000, 10_000, 5_000, 2_500, 1_250};
        for (long e : expected) {
            assertEquals(e, w.next());
            w.miss();
        }
        int probes = 0;
        for (int i = 0; i < 4 * SpinWindow.PROBE_EVERY; i++) {
            long n = w.next();
            if (n != 0) {
                assertEquals(20_000, n, "a probe spins the whole window");
                probes++;
                w.miss();
            }
        }
        assertEquals(4, probes);
    }

    @Test
    void aProbeThatHitsRestoresTheWindow() {
        SpinWindow w = new SpinWindow(20_000);
        for (int i = 0; i < 5; i++) {
            w.next();
            w.miss();
        }
        long n;
        do {
            n = w.next();
        } while (n == 0);
        w.hit();
        assertEquals(20_000, w.next());
    }

    @Test
    void quickWakeUpsInARowRestoreAParkedWindowAndSlowOnesDoNot() {
        SpinWindow w = new SpinWindow(20_000);
        for (int i = 0; i < 5; i++) {
            w.next();
            w.miss();
        }
        assertEquals(0, w.next());
        w.parked(SpinWindow.SHORT_PARK_WINDOWS * 20_000 + 1); // slow: the peer thinks
        w.parked(30_000);
        assertEquals(0, w.next(), "one quick wake-up after a slow one is not yet a pattern");
        w.parked(200_000);
        for (int i = 0; i < 3 * SpinWindow.SHORT_PARKS_TO_RESTORE; i += 2) {
            w.parked(30_000);
            w.parked(500_000); // every other wake-up slow: never restored
        }
        assertEquals(0, w.next());
        for (int i = 0; i < SpinWindow.SHORT_PARKS_TO_RESTORE; i++) {
            w.parked(30_000);
        }
        assertEquals(20_000, w.next(), "the answers come quickly: spin again");
        w.parked(10); // a wait that spun is no parked wait: nothing changes
        w.miss();
        assertEquals(10_000, w.next());
    }

    @Test
    void aZeroMaximumNeverSpins() {
        SpinWindow w = new SpinWindow(0);
        for (int i = 0; i < 2 * SpinWindow.PROBE_EVERY; i++) {
            assertEquals(0, w.next());
        }
    }
}
