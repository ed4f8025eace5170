package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link FlightRecorder}: ordering, wrap-around, filtering and torn-record freedom under contention. */
@Timeout(30)
class FlightRecorderTest {
    @Test
    void shouldRoundCapacityUpToPowerOfTwo() {
        assertEquals(1, new FlightRecorder(1).capacity());
        assertEquals(8, new FlightRecorder(5).capacity());
        assertEquals(4096, new FlightRecorder(4096).capacity());
        assertEquals(8192, new FlightRecorder(4097).capacity());
        assertThrows(IllegalArgumentException.class, () -> new FlightRecorder(0));
        assertThrows(IllegalArgumentException.class, () -> new FlightRecorder(FlightRecorder.MAX_CAPACITY + 1));
    }

    @Test
    void shouldParseRingSizeAndNamePropertyWhenBad() {
        assertEquals(FlightRecorder.RING_SIZE_DEFAULT, FlightRecorder.parseRingSize(null));
        assertEquals(100, FlightRecorder.parseRingSize(" 100 "));
        for (String bad : new String[] {"0", "-4", "x", "", "1048577"}) {
            final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> FlightRecorder.parseRingSize(bad));
            assertTrue(e.getMessage().startsWith("jsdp.trace.ringSize: bad value '" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void shouldKeepOnlyNewestCapacityRecordsInOrderAfterWrapAround() {
        final FlightRecorder ring = new FlightRecorder(8);
        for (int i = 0; i < 21; i++) {
            ring.append("wrap", TraceLevel.RARE, "e", 1, i, 0, 0, 0, null);
        }

        final List<TraceRecord> records = ring.snapshot();

        assertEquals(8, records.size());
        for (int i = 0; i < 8; i++) {
            assertEquals(13 + i, records.get(i).d1());
            assertEquals(13 + i, records.get(i).sequence());
        }
    }

    @Test
    void shouldFilterSnapshotByComponent() {
        final FlightRecorder ring = new FlightRecorder(16);
        ring.append("cm", TraceLevel.RARE, "a", 0, 0, 0, 0, 0, null);
        ring.append("qp", TraceLevel.ERROR, "b", 0, 0, 0, 0, 0, null);
        ring.append("cm", TraceLevel.ERROR, "c", 0, 0, 0, 0, 0, null);

        final List<String> cmEvents = new ArrayList<>();
        ring.snapshot("cm").forEach(r -> cmEvents.add(r.event()));

        assertEquals(List.of("a", "c"), cmEvents);
        assertEquals(1, ring.snapshot("qp").size());
        assertTrue(ring.snapshot("none").isEmpty());
    }

    @Test
    void shouldForgetRecordsOnClearAndKeepLaterOnes() {
        final FlightRecorder ring = new FlightRecorder(16);
        ring.append("c", TraceLevel.RARE, "before", 0, 0, 0, 0, 0, null);
        ring.clear();
        assertTrue(ring.snapshot().isEmpty());

        ring.append("c", TraceLevel.RARE, "after", 0, 0, 0, 0, 0, null);

        assertEquals(1, ring.snapshot().size());
        assertEquals("after", ring.snapshot().get(0).event());
    }

    @Test
    void shouldRenderRecordAsOneReadableLine() {
        final TraceRecord record = new TraceRecord(
            7, 1_012_345_678L, 0, 1, "main", "cm", 2, "cm.rejected", 2, 5, 255, 0, 0, null);

        assertEquals("+12.345678ms [main#1] cm L2 cm.rejected d1=0x5 d2=0xff", record.render(1_000_000_000L));
        assertEquals("-0.000001ms [main#1] cm L2 cm.rejected d1=0x5 d2=0xff", record.render(1_012_345_679L));
    }

    @Test
    void shouldStampRecordWithAppendingThread() {
        final FlightRecorder ring = new FlightRecorder(4);
        ring.append("c", TraceLevel.ERROR, "e", 0, 0, 0, 0, 0, null);

        final TraceRecord record = ring.snapshot().get(0);

        assertEquals(Thread.currentThread().getId(), record.threadId());
        assertEquals(Thread.currentThread().getName(), record.threadName());
        assertTrue(record.timeNanos() <= System.nanoTime());
    }

    @Test
    void shouldNeverReturnTornRecordsWhileFourThreadsAppendConcurrently() throws Exception {
        final int threads = 4;
        final int recordsPerThread = 100_000;
        // Small on purpose: writers lap each other and the reader constantly.
        final FlightRecorder ring = new FlightRecorder(64);
        final CountDownLatch start = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicBoolean writing = new AtomicBoolean(true);
        final List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final String component = "w" + t;
            final long base = (long) t << 40;
            final Thread writer = new Thread(() -> {
                awaitQuietly(start);
                for (long i = 0; i < recordsPerThread; i++) {
                    final long d1 = base + i;
                    ring.append(component, TraceLevel.RARE, "e", 4, d1, d1 * 3, ~d1, d1 ^ 0x5555_5555_5555_5555L, null);
                }
            }, "writer-" + t);
            writers.add(writer);
            writer.start();
        }
        final Thread reader = new Thread(() -> {
            awaitQuietly(start);
            try {
                while (writing.get()) {
                    checkConsistent(ring.snapshot(), ring.capacity());
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "reader");
        reader.start();

        start.countDown();
        for (Thread writer : writers) {
            writer.join();
        }
        writing.set(false);
        reader.join();

        if (failure.get() != null) {
            throw new AssertionError("reader saw a torn or misordered record", failure.get());
        }
        final List<TraceRecord> last = ring.snapshot();
        checkConsistent(last, ring.capacity());
        assertFalse(last.isEmpty(), "a quiescent ring holds the newest records");
    }

    private static void checkConsistent(List<TraceRecord> records, int capacity) {
        assertTrue(records.size() <= capacity, "snapshot larger than the ring: " + records.size());
        long previousSequence = -1;
        for (TraceRecord r : records) {
            final long d1 = r.d1();
            assertEquals(d1 * 3, r.d2(), r::toString);
            assertEquals(~d1, r.d3(), r::toString);
            assertEquals(d1 ^ 0x5555_5555_5555_5555L, r.d4(), r::toString);
            assertEquals("w" + (d1 >>> 40), r.component(), r::toString);
            assertTrue(r.sequence() > previousSequence, "oldest first");
            previousSequence = r.sequence();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
