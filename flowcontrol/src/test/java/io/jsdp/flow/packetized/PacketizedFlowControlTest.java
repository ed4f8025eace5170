package io.jsdp.flow.packetized;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.Violation;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class PacketizedFlowControlTest {
    private static PacketizedFlowControl rings(int own, int peer) {
        PacketizedFlowControl f = new PacketizedFlowControl();
        f.onRings(own, peer);
        return f;
    }

    @Test
    void senderSpaceShrinksWithWritesAndGrowsWithTheConsumedCount() {
        PacketizedFlowControl f = rings(1024, 1000);
        assertEquals(1000, f.ringSpace());
        f.onRingWrite(600);
        assertEquals(400, f.ringSpace());
        assertEquals(600, f.ringTailOffset());
        assertNull(f.onRingAck(250));
        assertEquals(650, f.ringSpace());
        f.onRingWrite(650);
        assertEquals(250, f.ringTailOffset(), "the tail wraps round the peer's ring");
        assertFalse(f.peerConsumedAll());
        assertNull(f.onRingAck(1250));
        assertTrue(f.peerConsumedAll());
    }

    @Test
    void consumedCountsThatGoBackOrReturnUnwrittenBytesAreViolations() {
        PacketizedFlowControl f = rings(1024, 1000);
        f.onRingWrite(100);
        assertEquals(Violation.RING_ACK_OUT_OF_RANGE, f.onRingAck(101));
        assertNull(f.onRingAck(60));
        assertEquals(Violation.RING_ACK_OUT_OF_RANGE, f.onRingAck(59), "goes back");
        assertNull(f.onRingAck(60), "the same count again is fine");
    }

    @Test
    void wireCountsWrapAt32Bits() {
        PacketizedFlowControl f = rings(1 << 20, 1 << 20);
        for (int i = 0; i < 4200; i++) { // 4200 MiB > 2^32 bytes
            f.onRingWrite(1 << 20);
            assertNull(f.onRingAck((int) ((i + 1L) << 20)), "round " + i);
        }
        assertTrue(f.peerConsumedAll());
    }

    @Test
    void ringDataMustStartAtTheNextFreeByteAndFitTheFreeBytes() {
        PacketizedFlowControl f = rings(1000, 1000);
        assertEquals(Violation.RING_OUT_OF_ORDER, f.onRingData(10, 5));
        assertEquals(Violation.RING_OVERRUN, f.onRingData(0, 1001));
        assertEquals(Violation.RING_OVERRUN, f.onRingData(0, 0));
        assertNull(f.onRingData(0, 900));
        assertEquals(900, f.unread());
        assertEquals(Violation.RING_OVERRUN, f.onRingData(900, 101), "only 100 free");
        f.onConsumed(500);
        assertEquals(500, f.readOffset());
        assertNull(f.onRingData(900, 600), "wraps round the end into the freed bytes");
        assertEquals(1000, f.unread());
        assertEquals(Violation.RING_OUT_OF_ORDER, f.onRingData(600, 1));
    }

    @Test
    void aRingAckIsDueOnceHalfTheRingWasFreedSinceTheLastCount() {
        PacketizedFlowControl f = rings(1000, 1000);
        assertNull(f.onRingData(0, 1000));
        f.onConsumed(499);
        assertFalse(f.ringAckNeeded());
        f.onConsumed(1);
        assertTrue(f.ringAckNeeded());
        assertEquals(500, f.takeConsumedForWire());
        assertFalse(f.ringAckNeeded(), "told");
    }

    @Test
    void heldDataMovesOnlyInTheApplicationsCalls() {
        PacketizedFlowControl f = new PacketizedFlowControl();
        assertFalse(f.movesDataWithoutApplication());
        assertFalse(f.holdsPartialMessages());
        assertEquals(0, f.deviceMessages());
        assertTrue(PacketizedFlowControl.validRingBytes(256));
        assertFalse(PacketizedFlowControl.validRingBytes(255));
        assertFalse(PacketizedFlowControl.validRingBytes((256L << 20) + 1));
    }
}
