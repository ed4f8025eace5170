package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.Reference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ResourceTracker}: levels, counting, reports and leak checks. */
@Timeout(20)
class ResourceTrackerTest {
    private final FlightRecorder ring = new FlightRecorder(16);
    private final CapturingSink sink = new CapturingSink();

    private ResourceTracker tracker(ResourceTracker.Level level, int samplingInterval) {
        return new ResourceTracker("soft-device#1", level, samplingInterval,
            new TraceComponent("leak", TraceLevel.RARE, ring, sink));
    }

    /** Stands in for a verbs object. */
    private static final class QueuePair {
    }

    @Test
    void shouldReturnSharedNoOpAndCountNothingWhenOff() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.OFF, 1);

        final Tracked a = tracker.track(new QueuePair(), "QP", "qp#1");
        final Tracked b = tracker.track(new QueuePair(), "QP", "qp#2");

        assertSame(a, b);
        assertFalse(a.isOpen());
        a.release();
        assertEquals(0, tracker.openCount());
        assertEquals("", tracker.checkLeaks());
        assertTrue(sink.lines.isEmpty());
    }

    @Test
    void shouldCountEveryResourceAndCaptureOneStackPerIntervalWhenSampled() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.SAMPLED, 4);

        for (int i = 0; i < 10; i++) {
            tracker.track(new QueuePair(), "QP", "qp#" + i);
        }

        assertEquals(10, tracker.openCount());
        final List<Boolean> captured = new ArrayList<>();
        tracker.open().forEach(r -> captured.add(!r.allocationSite().isEmpty()));
        assertEquals(List.of(true, false, false, false, true, false, false, false, true, false), captured);
        assertTrue(tracker.report().contains(LeakRecord.SAMPLED_OUT));
    }

    @Test
    void shouldNameTheCreatingTestMethodInLeakReport() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.ALL, 64);

        createQueuePair(tracker, "qp#7 on pd#1");

        final String report = tracker.report();
        assertTrue(report.startsWith("jsdp leak report for soft-device#1: 1 resource(s) still open\n"), report);
        assertTrue(report.contains("QP 'qp#7 on pd#1' (QueuePair) owner pid " + ProcessHandle.current().pid()
            + " thread " + Thread.currentThread().getName() + '#' + Thread.currentThread().getId()), report);
        assertTrue(report.contains("\tat io.jsdp.ras.ResourceTrackerTest.createQueuePair(ResourceTrackerTest.java:"),
            report);
        assertTrue(report.contains(
            "\tat io.jsdp.ras.ResourceTrackerTest.shouldNameTheCreatingTestMethodInLeakReport(ResourceTrackerTest.java:"),
            report);
        assertFalse(report.contains("ResourceTracker.track"), "tracker frames are left out");
    }

    private static Tracked createQueuePair(ResourceTracker tracker, String description) {
        return tracker.track(new QueuePair(), "QP", description);
    }

    @Test
    void shouldListOpenResourcesOldestFirst() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.ALL, 1);
        tracker.track(new QueuePair(), "PD", "pd#1");
        final Tracked mr = tracker.track(new QueuePair(), "MR", "mr#1");
        tracker.track(new QueuePair(), "CQ", "cq#1");

        mr.release();

        final List<String> kinds = new ArrayList<>();
        tracker.open().forEach(r -> kinds.add(r.kind()));
        assertEquals(List.of("PD", "CQ"), kinds);
    }

    @Test
    void shouldReleaseIdempotently() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.ALL, 1);
        final Tracked first = tracker.track(new QueuePair(), "CQ", "cq#1");
        final Tracked second = tracker.track(new QueuePair(), "CQ", "cq#2");

        first.release();
        first.release();

        assertFalse(first.isOpen());
        assertTrue(second.isOpen());
        assertEquals(1, tracker.openCount());
        assertEquals("CQ", second.kind());
        assertEquals("cq#2", second.description());
    }

    @Test
    void shouldReportLeaksThroughTraceAndRingWhenChecked() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.SAMPLED, 64);
        tracker.track(new QueuePair(), "QP", "qp#1");
        tracker.track(new QueuePair(), "CM_ID", "cm#1");

        final String report = tracker.checkLeaks();

        assertTrue(report.startsWith("jsdp leak report for soft-device#1: 2 resource(s) still open"), report);
        assertEquals(List.of("1 " + report), sink.lines);
        final List<TraceRecord> records = ring.snapshot("leak");
        assertEquals(1, records.size());
        assertEquals("leak.detected", records.get(0).event());
        assertEquals(TraceLevel.ERROR, records.get(0).level());
        assertEquals(2, records.get(0).d1());
    }

    @Test
    void shouldReportNothingWhenAllReleased() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.ALL, 1);
        tracker.track(new QueuePair(), "QP", "qp#1").release();

        assertEquals("", tracker.checkLeaks());
        assertEquals("jsdp leak report for soft-device#1: no open resources", tracker.report());
        assertTrue(sink.lines.isEmpty());
        assertTrue(ring.snapshot().isEmpty());
    }

    @Test
    void shouldForgetEverythingOnReleaseAll() {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.ALL, 1);
        final Tracked qp = tracker.track(new QueuePair(), "QP", "qp#1");

        tracker.releaseAll();
        qp.release();

        assertEquals(0, tracker.openCount());
        assertFalse(qp.isOpen());
    }

    @Test
    void shouldEndWithNothingOpenAfterConcurrentTrackAndRelease() throws Exception {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.SAMPLED, 64);
        final int threads = 4;
        final int resourcesPerThread = 5_000;
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        final CountDownLatch start = new CountDownLatch(1);
        try {
            final List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    final List<Tracked> held = new ArrayList<>();
                    for (int i = 0; i < resourcesPerThread; i++) {
                        held.add(tracker.track(new QueuePair(), "MR", "mr#" + i));
                        if (i % 3 == 0) {
                            held.remove(held.size() / 2).release();
                        }
                    }
                    held.forEach(Tracked::release);
                    held.forEach(Tracked::release);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : futures) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }

        assertEquals(0, tracker.openCount());
        assertEquals("", tracker.checkLeaks());
    }

    @Test
    void shouldNotKeepTrackedResourceAlive() throws InterruptedException {
        final ResourceTracker tracker = tracker(ResourceTracker.Level.ALL, 1);
        final Tracked[] handle = new Tracked[1];
        final WeakReference<Object> resource = trackGarbage(tracker, handle);

        for (int i = 0; i < 50 && resource.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }

        assertNull(resource.get(), "the tracker or its handle keeps the resource reachable");
        assertEquals(1, tracker.openCount());
        Reference.reachabilityFence(tracker);
        Reference.reachabilityFence(handle);
    }

    private static WeakReference<Object> trackGarbage(ResourceTracker tracker, Tracked[] handle) {
        final Object resource = new QueuePair();
        handle[0] = tracker.track(resource, "DEVICE_MEMORY", "dm#1");
        return new WeakReference<>(resource);
    }

    @Test
    void shouldParseLevelIgnoringCaseAndNamePropertyWhenBad() {
        assertEquals(ResourceTracker.Level.OFF, ResourceTracker.Level.parse("off"));
        assertEquals(ResourceTracker.Level.SAMPLED, ResourceTracker.Level.parse(" Sampled "));
        assertEquals(ResourceTracker.Level.ALL, ResourceTracker.Level.parse("ALL"));
        for (String bad : new String[] {"paranoid", "", "on"}) {
            final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> ResourceTracker.Level.parse(bad));
            assertEquals("jsdp.leakDetection: bad value '" + bad + "' (expected off, sampled or all)", e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> ResourceTracker.Level.parse(null));
    }

    @Test
    void shouldReadLevelAndSamplingIntervalFromSystemProperties() {
        final String previousLevel = System.getProperty(ResourceTracker.LEAK_DETECTION_PROP);
        final String previousInterval = System.getProperty(ResourceTracker.LEAK_SAMPLING_INTERVAL_PROP);
        try {
            System.clearProperty(ResourceTracker.LEAK_DETECTION_PROP);
            System.clearProperty(ResourceTracker.LEAK_SAMPLING_INTERVAL_PROP);
            assertEquals(ResourceTracker.Level.SAMPLED, ResourceTracker.configuredLevel());
            assertEquals(64, ResourceTracker.configuredSamplingInterval());

            System.setProperty(ResourceTracker.LEAK_DETECTION_PROP, "all");
            System.setProperty(ResourceTracker.LEAK_SAMPLING_INTERVAL_PROP, "8");
            assertEquals(ResourceTracker.Level.ALL, new ResourceTracker("scope").level());
            assertEquals(8, ResourceTracker.configuredSamplingInterval());

            System.setProperty(ResourceTracker.LEAK_SAMPLING_INTERVAL_PROP, "0");
            final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, ResourceTracker::configuredSamplingInterval);
            assertTrue(e.getMessage().startsWith("jsdp.leakDetection.samplingInterval: bad value '0'"), e.getMessage());
        } finally {
            restore(ResourceTracker.LEAK_DETECTION_PROP, previousLevel);
            restore(ResourceTracker.LEAK_SAMPLING_INTERVAL_PROP, previousInterval);
        }
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }
}
