package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30 (limits) and issue 28 (a connect storm degrades to TCP): a stack holds at most
 * {@code jsdp.limit.connections} connections and {@code jsdp.limit.handshakes} in set-up. A connect
 * beyond a cap is refused before it allocates anything; a request beyond a cap, or beyond a listener's
 * backlog, is rejected with the reason in the reject, which the connecting side reports as a busy peer.
 * Every admission and set-up slot comes back when its connection ends, however it ends.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionLimitsTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    /** Both ends of the connections a test made, to close at its end. */
    private final List<SdpConnection> ends = new ArrayList<>();

    private SdpConnection connected(SdpPair p, SdpListener listener) throws Exception {
        SdpConnection a = p.stackA.connect(listener.localAddress(), new SdpOptions());
        ends.add(a);
        assertTrue(a.awaitConnected(WAIT_NS), () -> a.failureDetail() + "\n" + a.snapshot());
        SdpConnection b = listener.accept(WAIT_NS);
        assertNotNull(b, "accepted");
        ends.add(b);
        return a;
    }

    /** Connects and expects the listening side to refuse: the connection fails as a busy peer. */
    private static String refused(SdpPair p, SdpListener listener) throws Exception {
        SdpConnection c = p.stackA.connect(listener.localAddress(), new SdpOptions());
        assertFalse(c.awaitConnected(WAIT_NS), "refused");
        assertEquals(Failure.PEER_BUSY, c.failure(), c.failureDetail());
        ConnectionStatisticsTest.awaitReleased(c);
        return c.failureDetail();
    }

    private void closeAll() throws InterruptedException {
        for (SdpConnection c : ends) {
            c.close();
        }
        for (SdpConnection c : ends) {
            ConnectionStatisticsTest.awaitReleased(c);
        }
        ends.clear();
    }

    /** Every admission and set-up slot of {@code s} is back. */
    private static void assertNothingHeld(SdpStack s) {
        assertEquals(0, s.limits().connections(), s.limits().describe());
        assertEquals(0, s.limits().handshakes(), s.limits().describe());
    }

    @Test
    void aConnectBeyondTheConnectionCapIsRefusedBeforeItAllocatesAnythingAndAdmittedAfterARelease() throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions())) {
            p.stackA.limits().set(2, 256);
            SdpConnection first = connected(p, p.listener);
            connected(p, p.listener);
            assertEquals(2, p.stackA.limits().connections());
            assertEquals(0, p.stackA.limits().handshakes(), "both handshakes ended");
            int open = p.stackA.openConnections();
            SdpLimitException e = assertThrows(SdpLimitException.class,
                () -> p.stackA.connect(p.listener.localAddress(), new SdpOptions()));
            assertEquals("SDP limit reached: 2 SDP connections (jsdp.limit.connections)", e.getMessage());
            assertEquals(open, p.stackA.openConnections(), "nothing allocated for the refused connect");
            assertEquals(1, p.stackA.limits().connectsLimited());
            assertTrue(p.stackA.limits().describe().contains("connections 2/2"), p.stackA.limits().describe());

            first.close();
            ends.get(1).close(); // its accepted end
            ConnectionStatisticsTest.awaitReleased(first);
            assertEquals(1, p.stackA.limits().connections(), "a released connection gave its admission back");
            connected(p, p.listener);
            closeAll();
            assertNothingHeld(p.stackA);
            assertNothingHeld(p.stackB);
        }
    }

    @Test
    void connectsInSetUpAreCappedAndAnAbortedOneGivesItsSlotBack() throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions())) {
            p.stackA.limits().set(100, 1);
            p.deviceA.faults().dropConnectRequests(true); // the first connect stays in set-up
            SdpConnection pending = p.stackA.connect(p.listener.localAddress(), new SdpOptions());
            assertEquals(1, p.stackA.limits().handshakes());
            SdpLimitException e = assertThrows(SdpLimitException.class,
                () -> p.stackA.connect(p.listener.localAddress(), new SdpOptions()));
            assertEquals("SDP limit reached: 1 SDP connections in set-up (jsdp.limit.handshakes)", e.getMessage());
            pending.abort();
            ConnectionStatisticsTest.awaitReleased(pending);
            assertNothingHeld(p.stackA);
            p.deviceA.faults().dropConnectRequests(false);
            connected(p, p.listener);
            assertEquals(0, p.stackA.limits().handshakes(), "the handshake ended");
            closeAll();
            assertNothingHeld(p.stackA);
            assertNothingHeld(p.stackB);
        }
    }

    @Test
    void aListeningStackAtItsCapRejectsSayingSoAndTheConnectorSeesABusyPeer() throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions())) {
            p.stackB.limits().set(1, 256);
            connected(p, p.listener);
            String detail = refused(p, p.listener);
            assertTrue(detail.endsWith("refused: it is at its connection limit"), detail);
            assertEquals(1, p.stackB.limits().requestsRefused());
            assertEquals(1, p.stackB.limits().connections(), "the refused request took nothing");
            closeAll();
            assertNothingHeld(p.stackA);
            assertNothingHeld(p.stackB);
        }
    }

    @Test
    void aFullBacklogRejectsAsBusyNotAsAMissingListener() throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions());
             SdpListener one = p.stackB.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, new SdpOptions())) {
            SdpConnection queued = p.stackA.connect(one.localAddress(), new SdpOptions());
            ends.add(queued);
            assertTrue(queued.awaitConnected(WAIT_NS), queued::failureDetail);
            String detail = refused(p, one); // the first waits in the backlog, not accepted
            assertTrue(detail.endsWith("refused: its backlog is full"), detail);
            assertEquals(1, p.stackB.limits().requestsRefused());
            SdpConnection accepted = one.accept(WAIT_NS);
            assertNotNull(accepted);
            ends.add(accepted);
            closeAll();
            assertNothingHeld(p.stackA);
            assertNothingHeld(p.stackB);
        }
    }

    @Test
    void badLimitsAreRefusedNamingTheValues() {
        ConnectionLimits l = new ConnectionLimits();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> l.set(0, 5));
        assertTrue(e.getMessage().contains("connections 0"), e.getMessage());
        assertEquals(ConnectionLimits.CONNECTIONS_DEFAULT + "", l.describe().replaceAll(".*connections 0/(\\d+),.*", "$1"));
    }
}
