package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link LeakDetector}: a guarded object that becomes garbage open is cleaned and reported; a closed one is not. */
@Timeout(60)
class LeakDetectorTest {

    /** Stands in for a channel; holds nothing the cleanup needs. */
    private static final class Channel {
    }

    /** Collects garbage until {@code done} or about 20 s passed; true when done. */
    static boolean gcUntil(BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 200 && !done.getAsBoolean(); i++) {
            System.gc();
            Thread.sleep(100);
        }
        return done.getAsBoolean();
    }

    private static Object openAndDrop(LeakDetector detector, AtomicInteger released, String kind) {
        Channel c = new Channel();
        detector.guard(c, kind, "channel to 10.0.0.1:7", () -> {
            released.incrementAndGet();
            return "the test cleanup ran";
        });
        return null; // c becomes garbage on return
    }

    @Test
    void closesAndReportsAnObjectGarbageCollectedWhileOpenNamingWhereItWasOpened() throws Exception {
        LeakDetector detector = new LeakDetector(new ResourceTracker("test-channels", ResourceTracker.Level.SAMPLED, 64));
        AtomicInteger released = new AtomicInteger();
        openAndDrop(detector, released, "TEST_LEAK_A");
        assertEquals(1, detector.tracker().openCount());

        assertTrue(gcUntil(() -> detector.leaksDetected() == 1), "the cleaner did not run");

        assertEquals(1, released.get(), "the cleanup runs once");
        assertEquals(0, detector.tracker().openCount());
        List<FfdcRecord> records = Ffdc.find("leak.TEST_LEAK_A", "");
        assertEquals(1, records.size(), () -> "one FFDC record: " + Ffdc.recent());
        FfdcRecord r = records.get(0);
        assertEquals("leak", r.component());
        assertTrue(r.summary().contains("LeakDetectorTest$Channel (channel to 10.0.0.1:7) was garbage-collected while open"),
            r.summary());
        assertTrue(r.summary().contains("opened at io.jsdp.ras.LeakDetectorTest.openAndDrop(LeakDetectorTest.java:"),
            r.summary());
        assertTrue(r.snapshot().contains("closed by the cleaner: the test cleanup ran"), r.snapshot());
        assertTrue(r.snapshot().contains("at io.jsdp.ras.LeakDetectorTest.closesAndReports"),
            () -> "the first object of a sampled tracker has its whole stack: " + r.snapshot());
    }

    @Test
    void reportsNothingAndRunsNoCleanupForAnObjectClosedFirst() throws Exception {
        LeakDetector detector = new LeakDetector(new ResourceTracker("test-closed", ResourceTracker.Level.ALL, 1));
        AtomicInteger released = new AtomicInteger();
        Channel c = new Channel();
        LeakDetector.Guard g = detector.guard(c, "TEST_CLOSED", "closed channel", () -> {
            released.incrementAndGet();
            return "";
        });
        assertTrue(g.opener().startsWith("io.jsdp.ras.LeakDetectorTest.reportsNothing"), g.opener());
        g.close();
        g.close();
        c = null;
        assertEquals(0, detector.tracker().openCount());
        // a leaked one made after it shows the cleaner has run past the closed one
        openAndDrop(detector, released, "TEST_CLOSED_MARK");
        assertTrue(gcUntil(() -> detector.leaksDetected() == 1));
        assertEquals(1, released.get(), "only the dropped one was cleaned up");
        assertTrue(Ffdc.find("leak.TEST_CLOSED", "closed channel").isEmpty());
        assertFalse(c != null);
    }

    @Test
    void stillClosesALeakedObjectWhenLeakDetectionIsOff() throws Exception {
        LeakDetector detector = new LeakDetector(new ResourceTracker("test-off", ResourceTracker.Level.OFF, 1));
        AtomicInteger released = new AtomicInteger();
        openAndDrop(detector, released, "TEST_OFF");
        assertTrue(gcUntil(() -> detector.leaksDetected() == 1));
        assertEquals(1, released.get());
        List<FfdcRecord> records = Ffdc.find("leak.TEST_OFF", "");
        assertEquals(1, records.size());
        assertTrue(records.get(0).summary().contains("opened at unknown (-Djsdp.leakDetection=off"),
            records.get(0).summary());
    }
}
