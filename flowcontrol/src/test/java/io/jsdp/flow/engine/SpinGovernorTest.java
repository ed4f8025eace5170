package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The adaptive-spinning decision (issue 27), with an injected clock and runnable-thread count. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SpinGovernorTest {
    private static final long MS = 1_000_000;
    private final AtomicInteger runnable = new AtomicInteger(1);
    private final SpinGovernor g = new SpinGovernor(true, 1_000 * MS, 2, runnable::get);

    @Test
    void spinsUntilASpinnerIsPreempted() {
        assertTrue(g.mayStart(0));
        g.onPreempted(3 * MS, 5 * MS);
        assertFalse(g.mayStart(6 * MS), "off right after a preemption");
        assertFalse(g.mayStart(5 * MS + SpinGovernor.BACKOFF_MIN_NS - 1), "off for the whole back-off");
        assertTrue(g.mayStart(5 * MS + SpinGovernor.BACKOFF_MIN_NS), "on again once the back-off passed and a core is free");
        assertEquals(1, g.preemptions());
        assertEquals(1, g.resumes());
    }

    @Test
    void staysOffWhileOtherRunnableThreadsFillEveryCore() {
        g.onPreempted(3 * MS, 0);
        runnable.set(3); // the caller and two others on two cores
        assertFalse(g.mayStart(SpinGovernor.BACKOFF_MIN_NS), "two others fill both cores");
        assertEquals(1, g.refusals());
        assertFalse(g.mayStart(SpinGovernor.BACKOFF_MIN_NS + 1), "no new look before the next back-off");
        runnable.set(2); // the caller and one other: a core is free
        assertTrue(g.mayStart(2 * SpinGovernor.BACKOFF_MIN_NS));
    }

    @Test
    void ownSpinnersDoNotCountAsLoad() {
        g.onPreempted(3 * MS, 0);
        g.enter(); // another thread of this JVM spins
        runnable.set(3); // the caller, our spinner and one other
        assertTrue(g.mayStart(SpinGovernor.BACKOFF_MIN_NS));
        g.exit();
    }

    @Test
    void backOffDoublesWhilePreemptionsRecurSoonAfterResumingAndResetsAfterQuiet() {
        long t = 0;
        long backoff = SpinGovernor.BACKOFF_MIN_NS;
        g.onPreempted(3 * MS, t);
        for (int i = 0; i < 12; i++) {
            t += backoff;
            assertFalse(g.mayStart(t - 1));
            assertTrue(g.mayStart(t));
            g.onPreempted(3 * MS, t); // preempted again at once
            backoff = Math.min(1_000 * MS, backoff * 2);
        }
        assertEquals(1_000 * MS, backoff, "capped by the maximum");
        t += backoff;
        assertFalse(g.mayStart(t - 1), "the back-off reached the maximum");
        assertTrue(g.mayStart(t));
        g.onPreempted(3 * MS, t + 10_000 * MS); // long after resuming: a new episode
        assertTrue(g.mayStart(t + 10_000 * MS + SpinGovernor.BACKOFF_MIN_NS), "back to the first back-off");
    }

    @Test
    void doesNotSpinWhileTheSamplesLeaveNoCoreForThePeer() {
        runnable.set(3); // the caller, the peer it woke and one busy thread, on two cores
        assertFalse(g.mayStart(0), "the spinner would take the core the peer needs");
        assertEquals(1, g.crowded());
        runnable.set(2); // the busy thread is gone: the caller and its peer fit
        long t = 0;
        for (int i = 1; i < SpinGovernor.SAMPLES; i++) {
            t += SpinGovernor.SAMPLE_NS;
            assertFalse(g.mayStart(t), "the busy thread stays in the recent samples (" + i + ")");
        }
        t += SpinGovernor.SAMPLE_NS;
        assertTrue(g.mayStart(t), "gone from every recent sample");
        assertEquals(0, g.preemptions(), "no preemption was needed to tell");
    }

    @Test
    void aPeerRunnablePartOfTheTimeDoesNotHideABusyThread() {
        long t = 0;
        boolean spun = false;
        for (int i = 0; i < 4 * SpinGovernor.SAMPLES; i++) {
            // the peer is running in every other sample: 2 (caller and busy thread) or 3 runnable
            runnable.set(2 + (i & 1));
            boolean may = g.mayStart(t);
            spun |= i >= 2 && may;
            t += SpinGovernor.SAMPLE_NS;
        }
        assertFalse(spun, "once a sample saw the peer and the busy thread, no wait spins");
    }

    @Test
    void twoPeersSpinningOnAnIdleMachineKeepSpinning() {
        runnable.set(2); // the caller and its spinning peer
        for (int i = 0; i < 4 * SpinGovernor.SAMPLES; i++) {
            assertTrue(g.mayStart(i * SpinGovernor.SAMPLE_NS));
        }
        assertEquals(0, g.crowded());
    }

    @Test
    void samplesAtMostOncePerSampleTime() {
        AtomicInteger reads = new AtomicInteger();
        SpinGovernor h = new SpinGovernor(true, 1_000 * MS, 2, () -> {
            reads.incrementAndGet();
            return 1;
        });
        for (long t = 0; t < 10 * SpinGovernor.SAMPLE_NS; t += 1_000) {
            h.mayStart(t);
        }
        assertEquals(10, reads.get());
    }

    @Test
    void anUnknownRunnableCountDoesNotKeepSpinningOff() {
        runnable.set(-1);
        g.onPreempted(3 * MS, 0);
        assertTrue(g.mayStart(SpinGovernor.BACKOFF_MIN_NS));
    }

    @Test
    void fixedModeAlwaysSpins() {
        SpinGovernor fixed = new SpinGovernor(false, 1_000 * MS, 2, runnable::get);
        fixed.onPreempted(3 * MS, 0);
        assertTrue(fixed.mayStart(1));
        assertTrue(fixed.on());
        assertTrue(fixed.describe().startsWith("fixed"), fixed.describe());
    }

    @Test
    void describesWhatDecided() {
        g.onPreempted(3 * MS, System.nanoTime());
        String d = g.describe();
        assertTrue(d.startsWith("adaptive, off for "), d);
        assertTrue(d.contains("preemptions 1"), d);
    }

    @Test
    void parsesTheRunnableCountOfLoadavg() {
        assertEquals(3, parse("0.52 0.58 0.59 3/467 12345\n"));
        assertEquals(117, parse("10.00 9.00 8.00 117/2048 1\n"));
        assertEquals(-1, parse("0.52 0.58 0.59 /467 12345\n"));
        assertEquals(-1, parse("0.52 0.58 0.59 x/467 12345\n"));
        assertEquals(-1, parse("0.52 0.58"));
        assertEquals(-1, parse(""));
    }

    @Test
    void readsThisMachinesRunnableThreads() {
        int n = new SpinGovernor.LoadAvg().getAsInt();
        if (System.getProperty("os.name").startsWith("Linux")) {
            assertTrue(n >= 1, "at least this thread runs: " + n);
        } else {
            assertEquals(-1, n);
        }
    }

    @Test
    void readingLoadavgIsNoInterruptibleIo() {
        // the read runs inside a socket channel's blocking section: an interruptible channel there
        // would take over the thread's interrupt hook (and close itself on an interrupt), so an
        // interrupt would no longer close the socket channel (found by the interrupt conformance tests)
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getProperty("os.name").startsWith("Linux"));
        SpinGovernor.LoadAvg l = new SpinGovernor.LoadAvg();
        Thread.currentThread().interrupt();
        try {
            assertTrue(l.getAsInt() >= 1, "read while interrupted");
            assertTrue(Thread.currentThread().isInterrupted(), "interrupt status kept");
            assertTrue(l.getAsInt() >= 1, "still readable");
        } finally {
            Thread.interrupted();
        }
    }

    private static int parse(String s) {
        return SpinGovernor.LoadAvg.parseRunnable(ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII)));
    }
}
