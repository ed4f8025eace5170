package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link TraceComponent}: the level check, the ring and the log as destinations. */
@Timeout(10)
class TraceComponentTest {
    private final FlightRecorder ring = new FlightRecorder(64);
    private final CapturingSink sink = new CapturingSink();

    private TraceComponent component(int level) {
        return new TraceComponent("comp", level, ring, sink);
    }

    @Test
    void shouldPassOnUpToConfiguredLevel() {
        final TraceComponent t = component(TraceLevel.INTERNALS);
        assertTrue(t.on(TraceLevel.ERROR));
        assertTrue(t.on(TraceLevel.INTERNALS));
        assertFalse(t.on(TraceLevel.HOT_ENTRY_EXIT));
        assertFalse(t.on(TraceLevel.DATA));
    }

    @Test
    void shouldStillPassRingLevelWhenComponentLevelIsOneOrOff() {
        for (int level : new int[] {TraceLevel.OFF, TraceLevel.ERROR}) {
            final TraceComponent t = component(level);
            assertTrue(t.on(TraceLevel.ERROR));
            assertTrue(t.on(TraceLevel.RARE), "the ring takes level 2 whatever the component level");
            assertFalse(t.on(3));
            assertFalse(t.on(TraceLevel.ENTRY_EXIT));
        }
    }

    @Test
    void shouldKeepRareRecordsInRingWhenComponentLevelIsOne() {
        final TraceComponent t = component(TraceLevel.ERROR);

        t.record(TraceLevel.RARE, "cm.rejected", 5, 6);
        t.record(TraceLevel.ERROR, "cm.failed", 7);

        final List<TraceRecord> records = ring.snapshot();
        assertEquals(2, records.size());
        assertEquals("cm.rejected", records.get(0).event());
        assertEquals(2, records.get(0).words());
        assertEquals(5, records.get(0).d1());
        assertEquals(6, records.get(0).d2());
        assertEquals("comp", records.get(0).component());
        assertEquals(TraceLevel.RARE, records.get(0).level());
        assertEquals(List.of("1 cm.failed d1=0x7"), sink.lines, "only level 1 reaches the log");
    }

    @Test
    void shouldKeepErrorAndRareRecordsInRingWhenComponentIsOff() {
        final TraceComponent t = component(TraceLevel.OFF);

        t.record(TraceLevel.ERROR, "e");
        t.record(TraceLevel.RARE, "r");

        assertEquals(2, ring.snapshot().size());
        assertTrue(sink.lines.isEmpty());
    }

    @Test
    void shouldNotPutRecordsAboveRingLevelIntoRing() {
        final TraceComponent t = component(TraceLevel.DATA);

        t.record(3, "three");
        t.record(TraceLevel.INTERNALS, "cq.arm", 0x2a);
        t.record(TraceLevel.DATA, "data", 1, 2, 3, 4);

        assertTrue(ring.snapshot().isEmpty());
        assertEquals(List.of("3 three", "5 cq.arm d1=0x2a", "9 data d1=0x1 d2=0x2 d3=0x3 d4=0x4"), sink.lines);
    }

    @Test
    void shouldEmitToLogOnlyWhenLevelWithinConfiguredLevel() {
        final TraceComponent t = component(TraceLevel.ENTRY_EXIT);

        t.record(TraceLevel.ENTRY_EXIT, "enter");
        t.record(TraceLevel.INTERNALS, "inside");
        t.level(TraceLevel.INTERNALS);
        t.record(TraceLevel.INTERNALS, "inside", 1, 2, 3);

        assertEquals(List.of("4 enter", "5 inside d1=0x1 d2=0x2 d3=0x3"), sink.lines);
    }

    @Test
    void shouldIgnoreRecordsAtLevelZero() {
        final TraceComponent t = component(TraceLevel.DATA);

        t.record(TraceLevel.OFF, "nothing");

        assertTrue(ring.snapshot().isEmpty());
        assertTrue(sink.lines.isEmpty());
    }

    @Test
    void shouldKeepCauseClassNameInRingAndThrowableInLog() {
        final TraceComponent t = component(TraceLevel.RARE);

        t.record(TraceLevel.ERROR, "qp.toError", new IOException("link down"));
        t.record(TraceLevel.ERROR, "no.cause", (Throwable) null);

        final List<TraceRecord> records = ring.snapshot();
        assertEquals("java.io.IOException", records.get(0).causeClass());
        assertNull(records.get(1).causeClass());
        assertTrue(records.get(0).toString().endsWith("comp L1 qp.toError cause=java.io.IOException"),
            records.get(0).toString());
        assertEquals(List.of("1 qp.toError cause=java.io.IOException", "1 no.cause"), sink.lines);
    }

    @Test
    void shouldRecordToRingWithoutAllocatingWhenLogIsOff() {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        final TraceComponent t = component(TraceLevel.OFF);
        final IOException cause = new IOException("x");
        for (int i = 0; i < 20_000; i++) { // warm up: class init, Class.getName() cache, JIT
            recordSome(t, i, cause);
        }

        final long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            recordSome(t, i, cause);
        }
        final long allocatedBytes = threads.getCurrentThreadAllocatedBytes() - before;

        // A single allocation per record would be >= 1.6 MB here; allow the measurement's own noise.
        assertTrue(allocatedBytes < 4096, "allocated " + allocatedBytes + " bytes");
        assertEquals(ring.capacity(), ring.snapshot().size());
    }

    private static void recordSome(TraceComponent t, long i, Throwable cause) {
        if (t.on(TraceLevel.RARE)) {
            t.record(TraceLevel.RARE, "hot.rare", i, i * 3, ~i, -i);
        }
        if (t.on(TraceLevel.INTERNALS)) {
            t.record(TraceLevel.INTERNALS, "never", i);
        }
        t.record(TraceLevel.ERROR, "err", cause);
    }

    @Test
    void shouldRenderAsConfigurationEntry() {
        assertEquals("comp:5", component(5).toString());
    }
}
