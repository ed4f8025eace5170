package io.jsdp.flow.nicassisted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.credit.CreditFlowControl;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class NicAssistedFlowControlTest {
    @Test
    void aPeerMessageBeyondItsCreditsIsLegalWhereCreditBasedCallsItAViolation() {
        NicAssistedFlowControl nic = new NicAssistedFlowControl(4);
        CreditFlowControl credit = new CreditFlowControl();
        for (FlowControl f : new FlowControl[] {nic, credit}) {
            f.onHandshake(false, 3);
            f.onSend(0, 2, 0); // our HelloAck told the peer of 2 buffers
        }
        // peer messages 1..3 all acknowledging our mseq 0: its third had no credit left
        assertNull(nic.onReceive(1, 0, 3, false, 1));
        assertNull(nic.onReceive(2, 0, 3, false, 1));
        assertNull(nic.onReceive(3, 0, 3, false, 1), "its device held it until our buffer was posted");
        assertNull(credit.onReceive(1, 0, 3, false, 1));
        assertEquals(Violation.NO_CREDIT, credit.onReceive(2, 0, 3, false, 1));
        assertEquals(Violation.ACK_OUT_OF_RANGE, nic.onReceive(4, 7, 3, false, 1), "the other checks stay");
    }

    @Test
    void theDeviceHandledPartIsAtLeastOneMessageAndDataMovesWithoutTheApplication() {
        assertThrows(IllegalArgumentException.class, () -> new NicAssistedFlowControl(0));
        NicAssistedFlowControl f = new NicAssistedFlowControl(8);
        assertEquals(8, f.deviceMessages());
        assertTrue(f.movesDataWithoutApplication());
        assertFalse(f.holdsPartialMessages(), "in the ring, as packetized: sent while there is room");
        assertTrue(FlowControlScheme.NIC.usesRing());
        assertFalse(FlowControlScheme.CREDIT.usesRing());
    }

    @Test
    void itKeepsPacketizedRingAccounting() {
        NicAssistedFlowControl f = new NicAssistedFlowControl(2);
        f.onRings(1024, 512);
        assertEquals(512, f.ringSpace());
        f.onRingWrite(500);
        assertEquals(12, f.ringSpace());
        assertNull(f.onRingAck(200));
        assertEquals(212, f.ringSpace());
        assertEquals(Violation.RING_ACK_OUT_OF_RANGE, f.onRingAck(100), "a consumed count may not go back");
        assertNull(f.onRingData(0, 1000));
        assertEquals(Violation.RING_OVERRUN, f.onRingData(1000, 100), "the ring checks stay");
    }
}
