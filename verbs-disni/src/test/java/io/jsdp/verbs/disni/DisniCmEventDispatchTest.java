package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyShort;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaVerbs;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CM events the shim cannot produce, through the adapter's event dispatch and state machine: SoftRdma's
 * CM never fails a route resolution, answers a connect without a queue pair, loses its device, joins a
 * multicast group, changes an address or reports time-wait. Mockito stands in for DiSNI's native side here
 * ({@code RdmaCm}, {@code RdmaVerbs}, the handles and {@code RdmaCmEvent}, whose constructors load libdisni);
 * the events the shim does produce are covered end to end by {@link DisniChainCmConformanceTest} and
 * {@link DisniChainVerbsConformanceTest}.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DisniCmEventDispatchTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(2);

    private DisniDevice device;
    private DisniCmEventChannel channel;
    /** The DiSNI id behind the last port id created. */
    private RdmaCmId lastRaw;

    @BeforeEach
    void mockNativeSide() throws Exception {
        // stub-only, fully stubbed before the channel's CM thread starts calling getCmEvent
        RdmaCm cm = mock(RdmaCm.class, withSettings().stubOnly());
        RdmaVerbs verbs = mock(RdmaVerbs.class, withSettings().stubOnly());
        IbvContext context = mock(IbvContext.class);
        when(cm.createEventChannel()).thenReturn(mock(RdmaEventChannel.class));
        when(cm.getCmEvent(any(), anyInt())).thenAnswer(call -> {
            Thread.sleep(call.<Integer>getArgument(1));
            return null; // libdisni's poll timed out; events come through dispatch()
        });
        when(cm.createId(any(), anyShort())).thenAnswer(call -> {
            lastRaw = mock(RdmaCmId.class);
            return lastRaw;
        });
        IbvQP qp = mock(IbvQP.class);
        when(qp.getQp_num()).thenReturn(7);
        when(cm.createQP(any(), any(), any())).thenReturn(qp);
        when(cm.disconnect(any())).thenReturn(0);
        IbvCompChannel cc = mock(IbvCompChannel.class);
        when(verbs.allocPd(context)).thenReturn(mock(IbvPd.class));
        when(verbs.createCompChannel(context)).thenReturn(cc);
        when(verbs.createCQ(any(), any(), anyInt(), anyInt())).thenReturn(mock(IbvCQ.class));
        device = DisniDevice.over(cm, verbs, context, new DisniDevice.Settings().address(InetAddress.getLoopbackAddress())
            .leakDetection(ResourceTracker.Level.ALL));
        channel = (DisniCmEventChannel) device.createEventChannel();
    }

    @AfterEach
    void close() {
        device.close();
    }

    private static RdmaCmEvent event(CmEventType type, RdmaCmId id) {
        return event(type.ordinal(), id);
    }

    private static RdmaCmEvent event(int code, RdmaCmId id) {
        RdmaCmEvent e = mock(RdmaCmEvent.class);
        when(e.getEvent()).thenReturn(code);
        when(e.getConnIdPriv()).thenReturn(id);
        when(e.getStatus()).thenReturn(-1); // libdisni's status, always
        return e;
    }

    private CmEvent next(CmEventType expected) throws Exception {
        CmEvent e = channel.poll(WAIT_NS);
        assertNotNull(e, "no " + expected);
        assertEquals(expected, e.type(), e.toString());
        return e;
    }

    /** An id whose connect is under way, with a queue pair. */
    private CmId connecting() throws Exception {
        CmId id = device.createId(channel);
        RdmaCmId raw = lastRaw;
        id.resolveAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000), 1000);
        channel.dispatch(event(CmEventType.ADDR_RESOLVED, raw));
        next(CmEventType.ADDR_RESOLVED);
        id.resolveRoute(1000);
        channel.dispatch(event(CmEventType.ROUTE_RESOLVED, raw));
        next(CmEventType.ROUTE_RESOLVED);
        CompletionQueue cq = device.createCompletionQueue(null, 8);
        id.createQueuePair(device.allocateProtectionDomain(), new QueuePairAttributes().sendCq(cq).recvCq(cq));
        id.connect(new ConnectionParameters());
        return id;
    }

    @Test
    void routeErrorEndsRouteResolutionWithHostUnreachable() throws Exception {
        CmId id = device.createId(channel);
        RdmaCmId raw = lastRaw;
        id.resolveAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000), 1000);
        channel.dispatch(event(CmEventType.ADDR_RESOLVED, raw));
        next(CmEventType.ADDR_RESOLVED);
        id.resolveRoute(1000);
        channel.dispatch(event(CmEventType.ROUTE_ERROR, raw));
        CmEvent e = next(CmEventType.ROUTE_ERROR);
        assertSame(id, e.id());
        assertEquals(-Errno.EHOSTUNREACH, e.status(), "before the timeout: no route, not a timeout");
        channel.dispatch(event(CmEventType.ROUTE_RESOLVED, raw));
        assertNull(channel.poll(TimeUnit.MILLISECONDS.toNanos(30)), "a late answer after the terminal event is dropped");
    }

    @Test
    void connectResponseCannotCompleteAConnectAndEndsItWithConnectError() throws Exception {
        CmId id = connecting();
        channel.dispatch(event(CmEventType.CONNECT_RESPONSE, lastRaw));
        CmEvent e = next(CmEventType.CONNECT_ERROR);
        assertSame(id, e.id());
        assertEquals(-Errno.EINVAL, e.status());
        assertEquals(QpState.ERROR, id.queuePair().state());
    }

    @Test
    void deviceRemovalEndsAnEstablishedConnectionAndItsQueuePair() throws Exception {
        CmId id = connecting();
        RdmaCmId raw = lastRaw;
        channel.dispatch(event(CmEventType.ESTABLISHED, raw));
        next(CmEventType.ESTABLISHED);
        QueuePair qp = id.queuePair();
        assertEquals(QpState.RTS, qp.state());
        channel.dispatch(event(CmEventType.DEVICE_REMOVAL, raw));
        CmEvent e = next(CmEventType.DEVICE_REMOVAL);
        assertEquals(-19, e.status(), "ENODEV");
        assertEquals(QpState.ERROR, qp.state());
        channel.dispatch(event(CmEventType.DISCONNECTED, raw));
        assertNull(channel.poll(TimeUnit.MILLISECONDS.toNanos(30)), "one terminal event");
    }

    @Test
    void addressChangeAndTimewaitExitArePassedOnWithoutChangingTheConnection() throws Exception {
        CmId id = connecting();
        RdmaCmId raw = lastRaw;
        channel.dispatch(event(CmEventType.ESTABLISHED, raw));
        next(CmEventType.ESTABLISHED);
        channel.dispatch(event(CmEventType.ADDR_CHANGE, raw));
        assertEquals(0, next(CmEventType.ADDR_CHANGE).status());
        channel.dispatch(event(CmEventType.DISCONNECTED, raw));
        next(CmEventType.DISCONNECTED);
        channel.dispatch(event(CmEventType.TIMEWAIT_EXIT, raw));
        CmEvent e = next(CmEventType.TIMEWAIT_EXIT);
        assertSame(id, e.id());
        assertEquals(QpState.RTS, id.queuePair().state(), "the peer's disconnect leaves the queue pair in RTS");
    }

    @Test
    void multicastEventsAndUnknownCodesAreDropped() throws Exception {
        CmId id = connecting();
        RdmaCmId raw = lastRaw;
        channel.dispatch(event(CmEventType.MULTICAST_JOIN, raw));
        channel.dispatch(event(CmEventType.MULTICAST_ERROR, raw));
        channel.dispatch(event(16, raw));
        channel.dispatch(event(CmEventType.ESTABLISHED, mock(RdmaCmId.class))); // an id this channel does not know
        assertNull(channel.poll(TimeUnit.MILLISECONDS.toNanos(30)));
        channel.dispatch(event(CmEventType.ESTABLISHED, raw));
        assertSame(id, next(CmEventType.ESTABLISHED).id(), "the connection went on regardless");
    }

    @Test
    void connectRequestWithoutAListeningIdIsDropped() throws Exception {
        RdmaCmEvent e = event(CmEventType.CONNECT_REQUEST, mock(RdmaCmId.class));
        when(e.getListenIdPriv()).thenReturn(mock(RdmaCmId.class));
        channel.dispatch(e);
        assertNull(channel.poll(TimeUnit.MILLISECONDS.toNanos(30)));
        assertEquals(1, device.resources().openCount(), "no id was made for it: " + device.resources().report());
    }
}
