package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.ras.StructureMarkers;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 10, acceptance 1, for the failure kinds the engine sees in one JVM: a corrupted receive buffer
 * (its structure marker overwritten, seed 000 5.1.4) and a device error (the link fails under traffic).
 * Each failure must abort only its connection, with one FFDC record holding the whole snapshot
 * ({@link FfdcContent}). Peer death is checked in {@link CrossProcessStreamTest}, protocol violations
 * in {@code rogue.ViolationFfdcContentTest}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FfdcPerFailureKindTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(20);
    /** Small buffers, so the test goes through every receive buffer in a few messages. */
    private static final SdpOptions SMALL = new SdpOptions().bufferBytes(4096).receiveBuffers(8).sendBuffers(4).noDelay(true);

    private static ByteBuffer bytes(int n, int seed) {
        ByteBuffer b = ByteBuffer.allocate(n);
        for (int i = 0; i < n; i++) {
            b.put((byte) (i * 31 + seed));
        }
        return b.flip();
    }

    /** Sends {@code count} messages of 100 bytes from {@code from} and checks each at {@code to}. */
    private static void exchange(SdpConnection from, SdpConnection to, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            Blocking.writeFully(from, bytes(100, i));
            ByteBuffer got = ByteBuffer.allocate(100);
            Blocking.readFully(to, got);
            assertEquals(bytes(100, i), got.flip(), "message " + i);
        }
    }

    @Test
    void abortsTheConnectionWhoseReceiveBufferMarkerWasOverwrittenAndRecordsWhereAndWhat() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL); SdpPair other = SdpPair.open(SMALL, SMALL)) {
            exchange(p.a, p.b, 3);
            // a stray write (another component, a bad RDMA offset) over the marker after B's receive buffer 5
            int bufferBytes = SMALL.bufferBytes();
            int at = StructureMarkers.markerOffset(6, bufferBytes);
            ByteBuffer mem = p.b.memoryForTests();
            mem.putLong(at, 0x4141414141414141L);

            // the connection goes on until a message uses a buffer next to the marker; then B aborts
            int delivered = 0;
            for (int i = 0; i < 2 * SMALL.receiveBuffers() && p.b.state() == SdpConnection.State.ESTABLISHED; i++) {
                if (p.a.write(bytes(100, 50 + i)) != 100) {
                    break;
                }
                ByteBuffer got = ByteBuffer.allocate(100);
                p.b.await(SdpConnection.OP_READ, WAIT_NS);
                int n = p.b.read(got);
                if (n < 0) {
                    break;
                }
                assertEquals(100, n, "a message arrives whole");
                assertEquals(bytes(100, 50 + i), got.flip(), "bytes handed on are never corrupt data");
                delivered++;
            }
            assertEquals(SdpConnection.OP_ENDED, p.b.await(SdpConnection.OP_ENDED, WAIT_NS), p.b::snapshot);
            assertEquals(Failure.CORRUPTION, p.b.failure(), p.b.failureDetail());
            assertEquals(SdpConnection.FAILED, p.b.read(ByteBuffer.allocate(10)));
            assertTrue(delivered < 2 * SMALL.receiveBuffers(), "the corruption was found before every buffer went round twice");

            List<FfdcRecord> records = Ffdc.find("corruption.RECEIVE_BUFFER", "connection " + p.b.id() + " ");
            assertEquals(1, records.size(), () -> "one record: " + Ffdc.recent());
            FfdcRecord r = records.get(0);
            FfdcContent.assertComplete(r, "corruption.RECEIVE_BUFFER", p.b);
            assertTrue(r.summary().contains("structure marker 6 of the receive buffers of connection " + p.b.id()
                + " at offset " + at + " (between buffer 5 and 6): expected 0x" + Long.toHexString(StructureMarkers.value(6))
                + ", found 0x4141414141414141"), r.summary());
            assertTrue(r.snapshot().contains(" brokenMarkers=1\n"), r.snapshot());

            // the peer sees a reset; the other connection of the same devices is untouched
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
    void aMarkerBrokenWhileAMessageWaitsUnreadFailsTheReadInsteadOfHandingOnTheBytes() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL)) {
            Blocking.writeFully(p.a, bytes(100, 1));
            assertEquals(SdpConnection.OP_READ, p.b.await(SdpConnection.OP_READ, WAIT_NS));
            assertEquals(100, p.b.available(), "the message waits in a receive buffer");
            ByteBuffer mem = p.b.memoryForTests();
            for (int i = 0; i <= SMALL.receiveBuffers(); i++) {
                mem.putLong(StructureMarkers.markerOffset(i, SMALL.bufferBytes()), 0); // whatever buffer holds it
            }
            ByteBuffer got = ByteBuffer.allocate(100);
            assertEquals(SdpConnection.FAILED, p.b.read(got));
            assertEquals(0, got.position(), "no byte of the buffer was handed on");
            assertEquals(Failure.CORRUPTION, p.b.failure());
            List<FfdcRecord> records = Ffdc.find("corruption.RECEIVE_BUFFER", "connection " + p.b.id() + " ");
            assertEquals(1, records.size(), () -> "one record: " + Ffdc.recent());
            assertTrue(records.get(0).summary().contains(" before a read: structure marker "), records.get(0).summary());
            FfdcContent.assertComplete(records.get(0), "corruption.RECEIVE_BUFFER", p.b);
            assertTrue(p.b.awaitReleased(WAIT_NS));
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS), p.a::snapshot);
            assertTrue(p.a.awaitReleased(WAIT_NS));
        }
    }

    @Test
    void abortsTheConnectionWhoseLinkFailsUnderTrafficWithADeviceErrorRecord() throws Exception {
        try (SdpPair p = SdpPair.open(SMALL, SMALL)) {
            exchange(p.a, p.b, 3);
            p.deviceB.faults().linkDown(true);
            Blocking.writeFully(p.a, bytes(100, 7)); // goes out, is never acknowledged
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS), p.a::snapshot);
            assertEquals(Failure.DEVICE_ERROR, p.a.failure(), p.a.failureDetail());
            assertTrue(p.a.failureDetail().contains("RETRY_EXC_ERR"), p.a.failureDetail());
            List<FfdcRecord> records = Ffdc.find("connection.DEVICE_ERROR", "connection " + p.a.id() + " ");
            assertEquals(1, records.size(), () -> "one record: " + Ffdc.recent());
            FfdcContent.assertComplete(records.get(0), "connection.DEVICE_ERROR", p.a);
            assertTrue(records.get(0).snapshot().contains(" brokenMarkers=0\n"), records.get(0).snapshot());
            p.deviceB.faults().clear();
            p.b.abort();
            assertTrue(p.a.awaitReleased(WAIT_NS) && p.b.awaitReleased(WAIT_NS));
        }
    }
}
