package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.QpState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which path a connect takes, and the device CM faults on the host path. Two host-fabric devices connect
 * through the node's messages and wires even in one JVM; a device of the in-JVM fabric connects directly
 * (the node's message counters tell which path ran); a JVM-fabric device cannot reach a HOST_ONLY
 * listener.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostCmRoutingTest {
    private static final long WAIT_MS = 5_000;
    private final List<SoftDevice> devices = new ArrayList<>();
    private final List<HostCmSide> sides = new ArrayList<>();

    private HostCmSide side(SoftDevice.Fabric fabric) throws Exception {
        SoftDevice d = SoftDevice.open(ResourceTracker.Level.ALL, fabric);
        devices.add(d);
        HostCmSide s = new HostCmSide(d);
        sides.add(s);
        return s;
    }

    @AfterEach
    void close() throws Exception {
        try {
            for (HostCmSide s : sides) {
                s.device.faults().clear();
                s.close();
            }
            for (SoftDevice d : devices) {
                assertEquals(0, d.resources().openCount(), () -> d.resources().report());
                assertNull(d.agentFailure(), "an agent task threw");
                if (d.host() != null) {
                    assertEquals(0, d.host().cm().registeredIds(), "closed ids leave the host CM");
                }
            }
        } finally {
            for (SoftDevice d : devices) {
                d.close();
            }
        }
    }

    /** Connects a to a listener of p and returns {active, passive}, both ESTABLISHED. */
    private static CmId[] establish(HostCmSide a, HostCmSide p) throws Exception {
        CmId listener = p.listen(4);
        CmId id = a.resolved(listener.localAddress());
        id.connect(new ConnectionParameters());
        CmId child = p.adopt(p.expect(CmEventType.CONNECT_REQUEST, WAIT_MS).id());
        child.createQueuePair(p.pd, p.attrs());
        child.accept(new ConnectionParameters());
        assertSame(id, a.expect(CmEventType.ESTABLISHED, WAIT_MS).id());
        assertSame(child, p.expect(CmEventType.ESTABLISHED, WAIT_MS).id());
        return new CmId[] {id, child};
    }

    @Test
    void hostOnlyDevicesConnectThroughTheirNodesMessages() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.HOST_ONLY);
        HostCmSide p = side(SoftDevice.Fabric.HOST_ONLY);
        HostCm cm = a.device.host().cm();
        long sent = cm.messagesSent();
        long received = cm.messagesReceived();
        CmId[] ends = establish(a, p);
        assertEquals(3, cm.messagesSent() - sent, "REQ, REP and RTU were messages");
        assertEquals(3, cm.messagesReceived() - received, "each handled once");
        ends[0].disconnect();
        a.expect(CmEventType.DISCONNECTED, WAIT_MS);
        p.expect(CmEventType.DISCONNECTED, WAIT_MS);
        assertEquals(QpState.RTS, ends[1].queuePair().state(), "the peer's queue pair waits for its disconnect");
        ends[1].disconnect();
        assertEquals(QpState.ERROR, ends[1].queuePair().state());
        assertNull(a.next(20));
        assertNull(p.next(20));
    }

    @Test
    void hostDevicesOfOneJvmConnectThroughWires() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.HOST);
        HostCmSide p = side(SoftDevice.Fabric.HOST);
        HostCm cm = a.device.host().cm();
        long sent = cm.messagesSent();
        CmId[] ends = establish(a, p);
        assertEquals(3, cm.messagesSent() - sent, "REQ, REP and RTU were messages");
        assertTrue(a.device.xp().mappedPeerSegments() > 0, "the queue pair maps its peer's wire");
        assertEquals(QpState.RTS, ends[0].queuePair().state());
    }

    @Test
    void aJvmFabricDeviceAndAHostDeviceConnectDirectly() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.JVM);
        HostCmSide p = side(SoftDevice.Fabric.HOST);
        HostCm cm = p.device.host().cm();
        long received = cm.messagesReceived();
        establish(a, p);
        assertEquals(received, cm.messagesReceived(), "no message: the in-JVM path");
        assertEquals(0, p.device.xp().mappedPeerSegments(), "no wire");
    }

    @Test
    void hostDeviceReachesAHostOnlyListenerThroughTheNode() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.HOST);
        HostCmSide p = side(SoftDevice.Fabric.HOST_ONLY);
        HostCm cm = a.device.host().cm();
        long sent = cm.messagesSent();
        establish(a, p);
        assertEquals(3, cm.messagesSent() - sent, "REQ, REP and RTU were messages");
    }

    @Test
    void jvmFabricDeviceCannotReachAHostOnlyListener() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.JVM);
        HostCmSide p = side(SoftDevice.Fabric.HOST_ONLY);
        CmId listener = p.listen(4);
        CmId id = a.resolved(listener.localAddress());
        id.connect(new ConnectionParameters());
        assertEquals(-Errno.ECONNREFUSED, a.expect(CmEventType.REJECTED, WAIT_MS).status());
        assertNull(p.next(20), "nothing reaches the listener");
    }

    @Test
    void droppedConnectRequestOnTheHostPathEndsUnreachableAtTheTimeout() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.HOST_ONLY);
        HostCmSide p = side(SoftDevice.Fabric.HOST_ONLY);
        CmId listener = p.listen(4);
        CmId id = a.resolved(listener.localAddress());
        a.device.faults().dropConnectRequests(true);
        long t0 = System.nanoTime();
        id.connect(new ConnectionParameters().connectTimeoutMs(100));
        CmEvent e = a.expect(CmEventType.UNREACHABLE, WAIT_MS);
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(100), "not before the connect timeout");
        assertEquals(-Errno.ETIMEDOUT, e.status());
        assertNull(p.next(20), "the request never reached the listener");
    }

    @Test
    void lostAndDelayedEventsOnTheHostPathAreTheReceivingDevicesFaults() throws Exception {
        HostCmSide a = side(SoftDevice.Fabric.HOST_ONLY);
        HostCmSide p = side(SoftDevice.Fabric.HOST_ONLY);
        CmId listener = p.listen(4);
        CmId id = a.resolved(listener.localAddress());
        a.device.faults().loseCmEvents(CmEventType.ESTABLISHED, 1);
        long delayNs = TimeUnit.MILLISECONDS.toNanos(100);
        p.device.faults().cmEventDelayNs(delayNs);
        long t0 = System.nanoTime();
        id.connect(new ConnectionParameters());
        CmId child = p.adopt(p.expect(CmEventType.CONNECT_REQUEST, WAIT_MS).id());
        assertTrue(System.nanoTime() - t0 >= delayNs, "the passive device delays its events");
        child.createQueuePair(p.pd, p.attrs());
        child.accept(new ConnectionParameters());
        p.expect(CmEventType.ESTABLISHED, WAIT_MS);
        assertNull(a.next(100), "the active side's ESTABLISHED was lost");
        assertEquals(QpState.RTS, id.queuePair().state(), "only the event went missing");
        child.disconnect();
        a.expect(CmEventType.DISCONNECTED, WAIT_MS);
    }
}
