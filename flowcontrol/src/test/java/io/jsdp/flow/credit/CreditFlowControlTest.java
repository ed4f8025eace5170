package io.jsdp.flow.credit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.Violation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The credit arithmetic of sdp-wire.md C.6, one rule per test, without a device. */
@Timeout(10)
class CreditFlowControlTest {

    /** An active side after Hello (mseq 0, bufs 8, nothing received) and HelloAck (bufs {@code peerBufs}). */
    private static CreditFlowControl activeAfterHandshake(int ownBufs, int peerBufs) {
        CreditFlowControl fc = new CreditFlowControl();
        fc.onSend(0, ownBufs, -1);
        fc.onHandshake(true, peerBufs);
        return fc;
    }

    @Test
    void activeSideStartsWithTheHelloAcksBufs() {
        assertEquals(5, activeAfterHandshake(8, 5).credits());
    }

    @Test
    void passiveSideStartsWithTheHellosBufsLessTheHelloAck() {
        CreditFlowControl fc = new CreditFlowControl();
        fc.onHandshake(false, 6);
        fc.onSend(0, 8, 0);
        assertEquals(5, fc.credits());
    }

    @Test
    void dataNeedsTwoCreditsAndTheLastIsReservedForUpdates() {
        CreditFlowControl fc = activeAfterHandshake(4, 3);
        assertTrue(fc.canSend(FlowControl.DATA, 4, 0));
        fc.onSend(1, 4, 0);
        assertTrue(fc.canSend(FlowControl.DATA, 4, 0));
        fc.onSend(2, 4, 0);
        assertEquals(1, fc.credits());
        assertFalse(fc.canSend(FlowControl.DATA, 4, 0), "the last credit is not for data");
    }

    @Test
    void theLastCreditGoesOnlyWithBuffersThePeerDoesNotKnowOf() {
        CreditFlowControl fc = activeAfterHandshake(4, 3);
        assertNull(fc.onReceive(1, 0, 3, false, 1)); // peer data 1
        fc.onSend(1, 4, 1);
        fc.onSend(2, 4, 1); // we told the peer of 4 buffers
        // the peer's update 2 has not seen our 1 and 2: our credits 0 - 3 + 1 + 3 = 1
        assertNull(fc.onReceive(2, 0, 3, true, 3));
        assertEquals(1, fc.credits());
        // the peer may still send 4 - 1 = 3: posting 3 tells it nothing, 4 tells it of one more
        assertFalse(fc.canSend(FlowControl.CREDIT_UPDATE, 3, 2), "nothing new to tell");
        assertTrue(fc.canSend(FlowControl.CREDIT_UPDATE, 4, 2), "one buffer more than the peer knows of");
    }

    @Test
    void creditsFollowBufsAndAcknowledgements() {
        CreditFlowControl fc = activeAfterHandshake(4, 4);
        fc.onSend(1, 4, 0);
        fc.onSend(2, 4, 0); // 2 credits left
        // the peer's message 1 acknowledges our 1 and has 4 posted: our 2 is still in flight
        assertNull(fc.onReceive(1, 1, 4, true, 3));
        assertEquals(3, fc.credits());
    }

    @Test
    void aPeerMessageBeyondItsCreditsIsAViolation() {
        CreditFlowControl fc = activeAfterHandshake(3, 4);
        // the peer had 3 - 1 (our Hello... its HelloAck took one) = 2 for its message 1: data is fine
        assertNull(fc.onReceive(1, 0, 4, false, 1));
        // message 2, still acknowledging only our Hello: 3 - (2 - 1 - (-1)) = 1 credit: data is not allowed
        assertEquals(Violation.NO_CREDIT, fc.onReceive(2, 0, 4, false, 1));
    }

    @Test
    void aCreditUpdateOnThePeersLastCreditIsFine() {
        CreditFlowControl fc = activeAfterHandshake(3, 4);
        assertNull(fc.onReceive(1, 0, 4, false, 1));
        assertNull(fc.onReceive(2, 0, 4, true, 1));
        assertEquals(Violation.NO_CREDIT, fc.onReceive(3, 0, 4, true, 1), "no credit left at all");
    }

    @Test
    void acknowledgementsMayNotGoBackOrAhead() {
        CreditFlowControl fc = activeAfterHandshake(8, 8);
        fc.onSend(1, 8, 0);
        fc.onSend(2, 8, 0);
        assertEquals(Violation.ACK_OUT_OF_RANGE, fc.onReceive(1, 3, 8, false, 3), "acknowledges a message never sent");
        assertNull(fc.onReceive(1, 2, 8, false, 3));
        assertEquals(Violation.ACK_OUT_OF_RANGE, fc.onReceive(2, 1, 8, false, 3), "goes back");
    }

    @Test
    void bufsAboveTheLimitAreAViolation() {
        CreditFlowControl fc = activeAfterHandshake(8, 8);
        assertEquals(Violation.BUFS_OUT_OF_RANGE, fc.onReceive(1, 0, CreditFlowControl.MAX_BUFS + 1, false, 1));
    }

    @Test
    void updatesAreDelayedUntilHalfTheBuffersAreUnknownToThePeer() {
        CreditFlowControl fc = activeAfterHandshake(8, 8);
        // HelloAck and data 1, 2 took three of the 8 buffers the Hello announced; all reposted
        assertNull(fc.onReceive(1, 0, 8, false, 1));
        assertNull(fc.onReceive(2, 0, 8, false, 1));
        assertFalse(fc.creditUpdateNeeded(8, 2, 8), "3 of 8 unknown to the peer, which may still send 5");
        assertNull(fc.onReceive(3, 0, 8, false, 1));
        assertTrue(fc.creditUpdateNeeded(8, 3, 8), "4 of 8 unknown to the peer");
        fc.onSend(1, 8, 3);
        assertFalse(fc.creditUpdateNeeded(8, 3, 8), "the update told it");
    }

    @Test
    void aStarvingPeerIsToldAboutAnyNewBuffer() {
        CreditFlowControl fc = activeAfterHandshake(3, 3);
        // the peer had 3 - 1 = 2 for its data message 1, which leaves it 1: starving
        assertNull(fc.onReceive(1, 0, 3, false, 1));
        assertTrue(fc.creditUpdateNeeded(2, 1, 3), "the HelloAck's buffer is back: one the peer does not know of");
        assertFalse(fc.creditUpdateNeeded(1, 1, 3), "nothing reposted: nothing to tell");
    }

    @Test
    void anUpdateThatLeavesThePeerTwoCreditsIsNotAnswered() {
        CreditFlowControl fc = activeAfterHandshake(3, 3);
        fc.onSend(1, 3, 0); // we tell the peer of 3 buffers
        // its update 1 acknowledges our 1: it had 3 credits, keeps 2: not starving, and we reposted at once
        assertNull(fc.onReceive(1, 1, 3, true, 2));
        assertFalse(fc.creditUpdateNeeded(3, 1, 3), "two idle sides must not answer each other for ever");
    }
}
