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
    void aZeroMaximumNeverSpins() {
        SpinWindow w = new SpinWindow(0);
        for (int i = 0; i < 2 * SpinWindow.PROBE_EVERY; i++) {
            assertEquals(0, w.next());
        }
    }
}
