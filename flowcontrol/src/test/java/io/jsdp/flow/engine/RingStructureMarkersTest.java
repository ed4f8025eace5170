package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.ras.StructureMarkers;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 10 for packetized flow control: the receive ring the peer RDMA-writes into has a structure
 * marker before and after it (seed 000 5.1.4). A stray write over one — a peer's write running over the
 * ring's end, another component's bug — aborts the connection with a {@code corruption.RING} FFDC record
 * when a RingData arrives or before a read, instead of handing on bytes from overwritten memory; other
 * connections go on. (A rogue peer that overruns the ring by RDMA WRITE: {@code rogue.RingRoguePeerTest}.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RingStructureMarkersTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(20);
    private static final SdpOptions SMALL = new SdpOptions().bufferBytes(4096).receiveBuffers(4).sendBuffers(4).noDelay(true)
        .flowControl(FlowControlScheme.PACKETIZED);
    private static final int RING = 4 * 4096;

    private static ByteBuffer bytes(int n, int seed) {
        ByteBuffer b = ByteBuffer.allocate(n);
        for (int i = 0; i < n; i++) {
            b.put((byte) (i * 31 + seed));
        }
        return b.flip();
    }

    /**
     * Sends {@code count} messages of 100 bytes and checks each. Packetized data held for want of credits
     * moves only inside the writer's calls, so while the reader waits the writer's connection is polled.
     */
    private static void exchange(SdpConnection from, SdpConnection to, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            Blocking.writeFully(from, bytes(100, i));
            ByteBuffer got = ByteBuffer.allocate(100);
            long deadline = System.nanoTime() + WAIT_NS;
            while (got.hasRemaining()) {
                from.readyOps();
                int n = to.read(got);
                assertTrue(n >= 0, () -> "read failed: " + to.snapshot());
                if (n == 0) {
                    assertTrue(System.nanoTime() - deadline < 0, () -> "message stalled: " + from.snapshot() + "\n" + to.snapshot());
                    Thread.onSpinWait();
                }
            }
            assertEquals(bytes(100, i), got.flip(), "message " + i);
        }
    }

    private static FfdcRecord oneRecord(SdpConnection c) {
        List<FfdcRecord> records = Ffdc.find("corruption.RING", "connection " + c.id() + " ");
        assertEquals(1, records.size(), () -> "one record: " + Ffdc.recent());
        FfdcContent.assertComplete(records.get(0), "corruption.RING", c);
        return records.get(0);
    }

    @Test
    void theRingHasAMarkerBeforeAndAfterIt() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL)) {
            assertEquals(FlowControlScheme.PACKETIZED, p.b.flowControlScheme());
            ByteBuffer ring = p.b.ringMemoryForTests();
            assertNotNull(ring, "a side asking for packetized has a ring");
            assertEquals(StructureMarkers.regionBytes(1, RING), ring.capacity());
            assertEquals(StructureMarkers.value(0), ring.getLong(0));
            assertEquals(StructureMarkers.value(1), ring.getLong(StructureMarkers.markerOffset(1, RING)));
            // a whole ring's worth and more goes round without touching them
            exchange(p.a, p.b, 3 * RING / 100);
            assertTrue(StructureMarkers.checkAround(ring, 0, 0, RING));
            assertTrue(p.b.snapshot().contains(" brokenMarkers=0\n"), p.b.snapshot());
        }
    }

    @Test
    void abortsTheConnectionWhoseRingMarkerWasOverwrittenWhenRingDataArrives() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL); SdpPair other = SdpPair.open(SMALL, SMALL)) {
            exchange(p.a, p.b, 3);
            // a stray write over the marker after the ring: what a peer's write running over the ring's end does
            int at = StructureMarkers.markerOffset(1, RING);
            p.b.ringMemoryForTests().putLong(at, 0x4141414141414141L);

            assertEquals(100, p.a.write(bytes(100, 9)), "the writer does not know yet");
            assertEquals(SdpConnection.OP_ENDED, p.b.await(SdpConnection.OP_ENDED, WAIT_NS), p.b::snapshot);
            assertEquals(Failure.CORRUPTION, p.b.failure(), p.b.failureDetail());
            ByteBuffer got = ByteBuffer.allocate(100);
            assertEquals(SdpConnection.FAILED, p.b.read(got));
            assertEquals(0, got.position(), "no byte of the ring was handed on");

            FfdcRecord r = oneRecord(p.b);
            assertTrue(r.summary().contains("receive ring on arrival of RingData mseq "), r.summary());
            assertTrue(r.summary().contains("marker 1 (after the ring's " + RING + " bytes): structure marker 1 of the receive ring"
                + " of connection " + p.b.id() + " at offset " + at + " "), r.summary());
            assertTrue(r.summary().contains("expected 0x" + Long.toHexString(StructureMarkers.value(1))
                + ", found 0x4141414141414141"), r.summary());
            assertTrue(r.snapshot().contains(" brokenMarkers=1\n"), r.snapshot());

            // the peer sees a reset; the other connection of the same devices goes on
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS), p.a::snapshot);
            assertEquals(Failure.RESET_BY_PEER, p.a.failure(), p.a.failureDetail());
            exchange(other.a, other.b, 20);
            exchange(other.b, other.a, 20);
            assertTrue(p.a.awaitReleased(WAIT_NS) && p.b.awaitReleased(WAIT_NS));
            other.a.close();
            other.b.close();
            assertTrue(other.a.awaitReleased(WAIT_NS) && other.b.awaitReleased(WAIT_NS));
        }
    }

    @Test
    void aMarkerBrokenWhileBytesWaitUnreadFailsTheReadInsteadOfHandingThemOn() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL)) {
            Blocking.writeFully(p.a, bytes(100, 1));
            assertEquals(SdpConnection.OP_READ, p.b.await(SdpConnection.OP_READ, WAIT_NS));
            assertEquals(100, p.b.available(), "the bytes wait in the ring");
            p.b.ringMemoryForTests().putLong(0, 0); // the marker before the ring
            ByteBuffer got = ByteBuffer.allocate(100);
            assertEquals(SdpConnection.FAILED, p.b.read(got));
            assertEquals(0, got.position(), "no byte of the ring was handed on");
            assertEquals(Failure.CORRUPTION, p.b.failure());
            FfdcRecord r = oneRecord(p.b);
            assertTrue(r.summary().contains("receive ring before a read: marker 0 (before the ring's " + RING + " bytes)"),
                r.summary());
            assertTrue(p.b.awaitReleased(WAIT_NS));
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS), p.a::snapshot);
            assertTrue(p.a.awaitReleased(WAIT_NS));
        }
    }
}
