package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The adaptive-spinning advice, on made-up clocks (no timing). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SpinAdvisorTest {
    private static final long SPIN = 20_000;
    private static final long CAP = 1_000_000;

    @Test
    void noAdviceBeforeTheFirstSampleOrWithoutSpinning() {
        SpinAdvisor a = new SpinAdvisor();
        assertEquals(0, a.advise(0, 500_000, SPIN, CAP), "nothing learned yet");
        a.learn(100_000);
        assertEquals(0, a.advise(0, 500_000, 0, CAP), "spin window 0: the application wants no polling");
        assertEquals(0, a.advise(0, 500_000, SPIN, 0), "cap 0: turned off");
        assertEquals(0, a.advise(0, 15_000, SPIN, CAP), "expected within the spin window: nothing beyond it");
        assertEquals(0, a.advise(600_000, 500_000, SPIN, CAP), "the expected time is past");
    }

    @Test
    void adviceReachesTheExpectedTimeUpToTheCap() {
        SpinAdvisor a = new SpinAdvisor();
        a.learn(100_000);
        assertEquals(100_000, a.average());
        assertEquals(200_000 - SPIN - 50_000, a.advise(50_000, 200_000, SPIN, CAP));
        a.onEvent(60_000);
        assertEquals(CAP, a.advise(0, 5_000_000, SPIN, CAP));
    }

    @Test
    void averageMovesAQuarterPerSample() {
        SpinAdvisor a = new SpinAdvisor();
        a.learn(100_000);
        a.learn(200_000);
        assertEquals(125_000, a.average());
        a.learn(0);
        a.learn(-5);
        assertEquals(125_000, a.average(), "non-positive samples are ignored");
    }

    @Test
    void aMissTurnsTheAdviceOffForTwiceAsManyEventsEachTime() {
        SpinAdvisor a = new SpinAdvisor();
        a.learn(100_000);
        long now = 0;
        // advice, event after the deadline: off for 1 event
        long left = a.advise(now, now + 200_000, SPIN, CAP);
        a.onEvent(now + SPIN + left + 1);
        assertEquals(1, a.skipping());
        assertEquals(0, a.advise(now, now + 200_000, SPIN, CAP));
        a.onEvent(now);
        assertEquals(0, a.skipping());
        // missed again: off for 2, then 4
        left = a.advise(now, now + 200_000, SPIN, CAP);
        a.onEvent(now + SPIN + left + 1);
        assertEquals(2, a.skipping());
        a.onEvent(now);
        a.onEvent(now);
        left = a.advise(now, now + 200_000, SPIN, CAP);
        a.onEvent(now + SPIN + left + 1);
        assertEquals(4, a.skipping());
        for (int i = 0; i < 4; i++) {
            assertEquals(0, a.advise(now, now + 200_000, SPIN, CAP));
            a.onEvent(now);
        }
        // a hit resets the backoff: the next miss is off for 1 again
        left = a.advise(now, now + 200_000, SPIN, CAP);
        a.onEvent(now + SPIN + left);
        assertEquals(0, a.skipping());
        left = a.advise(now, now + 200_000, SPIN, CAP);
        a.onEvent(now + SPIN + left + 1);
        assertEquals(1, a.skipping());
    }

    @Test
    void backoffIsBounded() {
        SpinAdvisor a = new SpinAdvisor();
        a.learn(100_000);
        for (int round = 0; round < 20; round++) {
            long left = a.advise(0, 200_000, SPIN, CAP);
            a.onEvent(SPIN + left + 1);
            int skip = a.skipping();
            for (int i = 0; i < skip; i++) {
                a.onEvent(0);
            }
        }
        long left = a.advise(0, 200_000, SPIN, CAP);
        a.onEvent(SPIN + left + 1);
        assertEquals(SpinAdvisor.MAX_BACKOFF, a.skipping());
    }
}
