package io.jsdp.verbs.conformance;

import static io.jsdp.verbs.conformance.Connection.expectEvent;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connection-manager event sequences for both sides (librdmacm semantics, project reference
 * {@code verbs-semantics.md} B.3): every id that starts connecting ends in a terminal event.
 * Written against the port only.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
public abstract class CmConformanceSuite {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);

    /** Device of the active side. */
    protected RdmaDevice active;
    /** Device of the passive side. */
    protected RdmaDevice passive;
    private final List<AutoCloseable> toClose = new ArrayList<>();

    /** Creates the suite. */
    protected CmConformanceSuite() {
    }

    /**
     * Opens a device for one side.
     *
     * @param side "active" or "passive"
     * @return a new device
     * @throws Exception on failure
     */
    protected abstract RdmaDevice openDevice(String side) throws Exception;

    /**
     * Makes address resolution towards {@code address} from {@code device} time out, or returns
     * false when the device cannot inject that fault.
     *
     * @param device the resolving device
     * @param address the address to black-hole
     * @return whether the fault is in place
     */
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        return false;
    }

    /**
     * Whether the device's connection manager carries private data and reject reasons. A device that
     * cannot (DiSNI: no private data, no {@code rdma_reject}, no event status) answers false; the tests that
     * check them then check instead that private data is refused with {@link Errno#EOPNOTSUPP} and that a
     * reject without data still reaches the active side as REJECTED.
     *
     * @return true when private data and reject reasons reach the peer
     */
    protected boolean carriesPrivateData() {
        return true;
    }

    /**
     * Checks, after a test, that {@code device} holds no open object. A device whose resource tracker
     * lives elsewhere (a proxy for a device in another process) overrides this to ask there.
     *
     * @param device one of the test's devices
     */
    protected void assertNoOpenResources(RdmaDevice device) {
        assertEquals(0, device.resources().openCount(), () -> device.resources().report());
    }

    @BeforeEach
    void open() throws Exception {
        active = openDevice("active");
        passive = openDevice("passive");
    }

    @AfterEach
    void closeAll() throws Exception {
        try {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                toClose.get(i).close();
            }
            assertNoOpenResources(active);
            assertNoOpenResources(passive);
        } finally {
            active.close();
            passive.close();
        }
    }

    private <T extends AutoCloseable> T later(T c) {
        toClose.add(c);
        return c;
    }

    /** The objects one side needs for a queue pair. */
    private final class Side {
        final RdmaDevice device;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final CmEventChannel events;

        Side(RdmaDevice device) throws Exception {
            this.device = device;
            this.pd = later(device.allocateProtectionDomain());
            this.cq = later(device.createCompletionQueue(null, 64));
            this.events = later(device.createEventChannel());
        }

        QueuePairAttributes attrs() {
            return new QueuePairAttributes().sendCq(cq).recvCq(cq);
        }

        CmId id() throws Exception {
            return later(device.createId(events));
        }
    }

    private CmId listen(Side s) throws Exception {
        CmId l = s.id();
        l.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        l.listen(4);
        assertNotNull(l.localAddress());
        assertTrue(l.localAddress().getPort() > 0, "an ephemeral port was assigned");
        return l;
    }

    private CmId resolved(Side s, InetSocketAddress to) throws Exception {
        CmId id = s.id();
        id.resolveAddress(to, 1000);
        expectEvent(s.events, CmEventType.ADDR_RESOLVED);
        assertSame(s.device, id.device());
        id.resolveRoute(1000);
        expectEvent(s.events, CmEventType.ROUTE_RESOLVED);
        id.createQueuePair(s.pd, s.attrs());
        return id;
    }

    @Test
    void resolveConnectAcceptEstablishesBothSidesWithPrivateData() throws Exception {
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId id = resolved(a, listener.localAddress());
        boolean data = carriesPrivateData();
        if (!data) {
            assertEquals(Errno.EOPNOTSUPP, assertThrows(VerbsException.class,
                () -> id.connect(new ConnectionParameters().privateData(new byte[] {1, 2, 3}))).errno());
        }
        id.connect(new ConnectionParameters().privateData(data ? new byte[] {1, 2, 3} : new byte[0]));
        CmEvent req = expectEvent(p.events, CmEventType.CONNECT_REQUEST);
        assertSame(listener, req.listenId());
        assertNotNull(req.id());
        if (data) {
            assertArrayEquals(new byte[] {1, 2, 3}, java.util.Arrays.copyOf(req.privateData(), 3));
        }
        CmId child = later(req.id());
        assertEquals(id.localAddress().getPort(), child.remoteAddress().getPort());
        child.createQueuePair(p.pd, p.attrs());
        if (!data) {
            assertEquals(Errno.EOPNOTSUPP, assertThrows(VerbsException.class,
                () -> child.accept(new ConnectionParameters().privateData(new byte[] {9, 8}))).errno());
        }
        child.accept(new ConnectionParameters().privateData(data ? new byte[] {9, 8} : new byte[0]));
        assertEquals(QpState.RTS, child.queuePair().state(), "the passive queue pair is RTS once accepted");
        CmEvent est = expectEvent(a.events, CmEventType.ESTABLISHED);
        assertSame(id, est.id());
        if (data) {
            assertArrayEquals(new byte[] {9, 8}, java.util.Arrays.copyOf(est.privateData(), 2));
        }
        assertSame(child, expectEvent(p.events, CmEventType.ESTABLISHED).id());
        assertEquals(QpState.RTS, id.queuePair().state());
        assertEquals(listener.localAddress().getPort(), id.remoteAddress().getPort());
    }

    @Test
    void connectWithoutListenerIsRejected() throws Exception {
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        InetSocketAddress where = listener.localAddress();
        listener.close();
        CmId id = resolved(a, where);
        id.connect(new ConnectionParameters());
        CmEvent e = expectEvent(a.events, CmEventType.REJECTED);
        assertSame(id, e.id());
        assertEquals(-Errno.ECONNREFUSED, e.status());
        assertNull(p.events.poll(TimeUnit.MILLISECONDS.toNanos(20)), "nothing reaches the closed listener");
    }

    @Test
    void rejectDeliversReasonAndPrivateData() throws Exception {
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId id = resolved(a, listener.localAddress());
        id.connect(new ConnectionParameters());
        CmId child = later(expectEvent(p.events, CmEventType.CONNECT_REQUEST).id());
        if (!carriesPrivateData()) {
            assertEquals(Errno.EOPNOTSUPP, assertThrows(VerbsException.class, () -> child.reject(new byte[] {42})).errno());
            child.reject(null);
            CmEvent e = expectEvent(a.events, CmEventType.REJECTED);
            assertSame(id, e.id());
            assertNull(a.events.poll(TimeUnit.MILLISECONDS.toNanos(20)), "one terminal event");
            return;
        }
        child.reject(new byte[] {42});
        CmEvent e = expectEvent(a.events, CmEventType.REJECTED);
        assertEquals(CmEvent.REJECT_CONSUMER, e.status());
        assertEquals(42, e.privateData()[0]);
    }

    @Test
    void requestDestroyedWithoutAnswerIsRejected() throws Exception {
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId id = resolved(a, listener.localAddress());
        id.connect(new ConnectionParameters());
        expectEvent(p.events, CmEventType.CONNECT_REQUEST).id().close();
        expectEvent(a.events, CmEventType.REJECTED);
    }

    @Test
    void unansweredConnectEndsUnreachableOnBothSides() throws Exception {
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId id = resolved(a, listener.localAddress());
        long t0 = System.nanoTime();
        id.connect(new ConnectionParameters().connectTimeoutMs(100));
        CmId child = later(expectEvent(p.events, CmEventType.CONNECT_REQUEST).id());
        CmEvent e = expectEvent(a.events, CmEventType.UNREACHABLE);
        assertEquals(-Errno.ETIMEDOUT, e.status());
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(100), "not before the timeout");
        // The late answer finds nobody: the passive side ends UNREACHABLE too.
        child.createQueuePair(p.pd, p.attrs());
        child.accept(new ConnectionParameters());
        assertEquals(-Errno.ETIMEDOUT, expectEvent(p.events, CmEventType.UNREACHABLE).status());
    }

    @Test
    void activeQueuePairThatCannotGoToRtsEndsInConnectErrorAndRejectsThePassiveSide() throws Exception {
        // librdmacm ucma_process_conn_resp: the REP arrives but the active QP cannot move to RTR/RTS ->
        // CONNECT_ERROR, and a REJ, which the passive side reports as REJECTED (B.3, step 3).
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId id = resolved(a, listener.localAddress());
        id.connect(new ConnectionParameters());
        CmId child = later(expectEvent(p.events, CmEventType.CONNECT_REQUEST).id());
        id.queuePair().modify(QpState.ERROR);
        child.createQueuePair(p.pd, p.attrs());
        child.accept(new ConnectionParameters());
        CmEvent failed = expectEvent(a.events, CmEventType.CONNECT_ERROR);
        assertSame(id, failed.id());
        CmEvent rejected = expectEvent(p.events, CmEventType.REJECTED);
        assertSame(child, rejected.id());
        assertEquals(QpState.ERROR, child.queuePair().state(), "a rejected passive queue pair goes to ERROR");
        assertNull(a.events.poll(TimeUnit.MILLISECONDS.toNanos(20)), "one terminal event");
        assertThrows(VerbsException.class, id::disconnect, "never connected");
    }

    @Test
    void addressOutsideTheFabricEndsInAddrError() throws Exception {
        Side a = new Side(active);
        CmId id = a.id();
        // TEST-NET-1 (RFC 5737): never an address of this host. Resolution is local: nothing is sent.
        id.resolveAddress(new InetSocketAddress(InetAddress.getByName("192.0.2.1"), 7000), 200);
        CmEvent e = a.events.poll(WAIT_NS);
        assertNotNull(e, "a terminal event within the timeout");
        assertEquals(CmEventType.ADDR_ERROR, e.type());
    }

    @Test
    void addressResolutionTimeoutEndsInAddrError() throws Exception {
        InetAddress target = InetAddress.getLoopbackAddress();
        assumeTrue(blackhole(active, target), "needs fault injection (black-holed address)");
        Side a = new Side(active);
        CmId id = a.id();
        long t0 = System.nanoTime();
        id.resolveAddress(new InetSocketAddress(target, 7000), 50);
        CmEvent e = expectEvent(a.events, CmEventType.ADDR_ERROR);
        assertEquals(-Errno.ETIMEDOUT, e.status());
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(50));
    }

    /** Both ends of one established connection, with their sides. */
    private record Established(Side a, Side p, CmId listener, CmId id, CmId child) {
    }

    private Established establish() throws Exception {
        Side a = new Side(active);
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId id = resolved(a, listener.localAddress());
        id.connect(new ConnectionParameters());
        CmId child = later(expectEvent(p.events, CmEventType.CONNECT_REQUEST).id());
        child.createQueuePair(p.pd, p.attrs());
        child.accept(new ConnectionParameters());
        expectEvent(a.events, CmEventType.ESTABLISHED);
        expectEvent(p.events, CmEventType.ESTABLISHED);
        return new Established(a, p, listener, id, child);
    }

    @Test
    void disconnectGivesBothSidesDisconnected() throws Exception {
        Established c = establish();
        Side a = c.a();
        Side p = c.p();
        CmId listener = c.listener();
        CmId id = c.id();
        CmId child = c.child();
        child.disconnect();
        expectEvent(p.events, CmEventType.DISCONNECTED);
        expectEvent(a.events, CmEventType.DISCONNECTED);
        assertEquals(QpState.ERROR, child.queuePair().state());
        id.disconnect();
        assertEquals(QpState.ERROR, id.queuePair().state());
        assertNull(a.events.poll(TimeUnit.MILLISECONDS.toNanos(20)));
        assertThrows(VerbsException.class, listener::disconnect, "a listener is not connected");
    }

    @Test
    void destroyingConnectedIdDisconnectsPeer() throws Exception {
        Established c = establish();
        Side p = c.p();
        CmId id = c.id();
        id.close();
        expectEvent(p.events, CmEventType.DISCONNECTED);
    }

    @Test
    void bindingATakenPortFailsWithAddressInUse() throws Exception {
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId second = p.id();
        VerbsException e = assertThrows(VerbsException.class, () -> second.bind(listener.localAddress()));
        assertEquals(Errno.EADDRINUSE, e.errno());
    }

    @Test
    void connectBeforeRouteResolutionIsRefused() throws Exception {
        Side a = new Side(active);
        CmId id = a.id();
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
            () -> id.connect(new ConnectionParameters())).errno());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> id.resolveRoute(100)).errno());
        byte[] tooLong = new byte[ConnectionParameters.MAX_CONNECT_PRIVATE_DATA + 1];
        Side p = new Side(passive);
        CmId listener = listen(p);
        CmId r = resolved(a, listener.localAddress());
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class,
            () -> r.connect(new ConnectionParameters().privateData(tooLong))).errno());
    }
}
