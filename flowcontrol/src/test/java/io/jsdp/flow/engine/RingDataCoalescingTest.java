package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Packetized flow control keeps one RingData in flight: writes made meanwhile are RDMA-written at once
 * (TCP_NODELAY: no hold) and announced together by the next RingData, which goes when the one in flight
 * completes — from the stack's progress thread when the writer's application makes no further call (it
 * moves no held data). Sends are slowed with the device's operation delay so "in flight" lasts.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RingDataCoalescingTest {
    /** Fewer than the send slots (16): that many WRITEs may wait for their RingData, later writes wait in the send ring. */
    private static final int WRITES = 12;
    private static final Pattern NOTES = Pattern.compile("notes posted=(\\d+)");
    private static final Pattern STREAM = Pattern.compile("ring stream written=(\\d+) posted=(\\d+) announced=(\\d+)");

    private static SdpOptions options() {
        return new SdpOptions().noDelay(true).flowControl(FlowControlScheme.PACKETIZED);
    }

    private static long notes(SdpConnection c) {
        Matcher m = NOTES.matcher(c.snapshot());
        assertTrue(m.find(), c.snapshot());
        return Long.parseLong(m.group(1));
    }

    @Test
    void writesMadeWhileARingDataIsInFlightAreAnnouncedTogetherWithoutAFurtherCallOfTheWriter() throws Exception {
        try (SdpPair p = SdpPair.open(options(), options())) {
            assertEquals(FlowControlScheme.PACKETIZED, p.a.flowControlScheme());
            p.deviceA.faults().operationDelayNs(TimeUnit.MILLISECONDS.toNanos(100));
            long before = notes(p.a);
            for (int i = 0; i < WRITES; i++) {
                // each write is taken whole at once: the send ring has room for all of them
                assertEquals(10, p.a.write(ByteBuffer.wrap(new byte[] {(byte) i, 1, 2, 3, 4, 5, 6, 7, 8, 9})));
            }
            Matcher m = STREAM.matcher(p.a.snapshot());
            assertTrue(m.find(), p.a.snapshot());
            assertEquals(WRITES * 10, Long.parseLong(m.group(2)), "every write was RDMA-written at once: " + p.a.snapshot());
            assertTrue(Long.parseLong(m.group(3)) < WRITES * 10, "not all announced yet: " + p.a.snapshot());

            // no call on A from here on: its progress thread announces what was written
            ByteBuffer all = ByteBuffer.allocate(WRITES * 10);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (all.hasRemaining()) {
                p.b.await(SdpConnection.OP_READ, TimeUnit.SECONDS.toNanos(1));
                assertTrue(p.b.read(all) >= 0, p.b::snapshot);
                assertTrue(System.nanoTime() - deadline < 0, () -> "stalled:\n" + p.a.snapshot() + "\n" + p.b.snapshot());
            }
            for (int i = 0; i < WRITES; i++) {
                assertEquals((byte) i, all.get(i * 10), "byte order kept");
                assertEquals((byte) 9, all.get(i * 10 + 9));
            }
            long notes = notes(p.a) - before;
            // 2 when the loop ran within one delayed RingData (the usual case); a writer descheduled for longer
            // than the delay sees the second RingData go mid-loop, and a third announce the rest
            assertTrue(notes >= 2 && notes <= 3, notes + " RingData for " + WRITES
                + " writes: the first announced at once, the rest together when it completed");
            p.deviceA.faults().clear();
        }
    }
}
