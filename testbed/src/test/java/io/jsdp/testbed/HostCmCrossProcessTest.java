package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.ChildJvm;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Connection management between this JVM and a forked one ({@link HostCmChild}, which listens, reports
 * its events on its output, and connects to a listener here): the port space is shared, requests and
 * answers cross, and both ends see librdmacm's event sequences. One child serves the whole class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostCmCrossProcessTest {
    private static final long WAIT_MS = 10_000;
    /** Generous bound on a refusal, which needs one message each way. */
    private static final long PROMPT_MS = 1_000;

    private SoftDevice device;
    private HostCmSide side;
    /** The listener the child connects to, with its own channel. */
    private HostCmSide listenerSide;
    private CmId parentListener;
    private ChildJvm child;
    private NodeId childNode;
    private int acceptingPort;
    private int silentPort;
    private int boundPort;

    @BeforeAll
    void startChild() throws Exception {
        device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        listenerSide = new HostCmSide(device);
        parentListener = listenerSide.listen(4);
        Rendezvous r = device.host().node().rendezvous();
        child = ChildJvm.start(HostCmChild.class, r.directory().toString(),
            Integer.toString(parentListener.localAddress().getPort()));
        String[] ready = child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ");
        childNode = NodeId.parse(ready[1]);
        acceptingPort = Integer.parseInt(ready[2]);
        silentPort = Integer.parseInt(ready[3]);
        boundPort = Integer.parseInt(ready[4]);
        assertEquals(child.pid(), childNode.pid());
    }

    @AfterAll
    void stopChild() throws Exception {
        try {
            if (child != null) {
                child.close();
            }
            // A request of the child that no test took (when tests are filtered) is closed too.
            for (CmEvent e; (e = listenerSide.next(50)) != null;) {
                if (e.type() == CmEventType.CONNECT_REQUEST) {
                    listenerSide.adopt(e.id());
                }
            }
            listenerSide.close();
            assertEquals(0, device.resources().openCount(), () -> device.resources().report());
        } finally {
            device.close();
        }
    }

    @BeforeEach
    void openSide() throws Exception {
        side = new HostCmSide(device);
    }

    @AfterEach
    void closeSide() throws Exception {
        side.close();
    }

    private static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    @Test
    void portsTheOtherProcessHoldsAreInUseHere() throws Exception {
        Rendezvous r = device.host().node().rendezvous();
        for (int port : new int[] {acceptingPort, boundPort}) {
            assertEquals(childNode, r.listenerOwner(port));
            CmId id = side.id();
            VerbsException e = assertThrows(VerbsException.class, () -> id.bind(loopback(port)));
            assertEquals(Errno.EADDRINUSE, e.errno(), "port " + port);
        }
    }

    @Test
    void connectToAPortTheOtherProcessBoundWithoutListeningIsRefusedQuickly() throws Exception {
        CmId id = side.resolved(loopback(boundPort));
        long t0 = System.nanoTime();
        id.connect(new ConnectionParameters().connectTimeoutMs(20_000));
        CmEvent e = side.expect(CmEventType.REJECTED, WAIT_MS);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(-Errno.ECONNREFUSED, e.status());
        assertTrue(ms < PROMPT_MS, "refused after " + ms + " ms, not at the connect timeout");
    }

    @Test
    void connectToAListenerInAnotherProcessEstablishesBothSidesAndDisconnects() throws Exception {
        CmId id = side.resolved(loopback(acceptingPort));
        id.connect(new ConnectionParameters().privateData(new byte[] {1, 2, 3}));
        assertTrue(child.awaitLine("CONNECT_REQUEST", WAIT_MS, TimeUnit.MILLISECONDS).startsWith("CONNECT_REQUEST 0 010203"),
            "the request carries the private data");
        CmEvent est = side.expect(CmEventType.ESTABLISHED, WAIT_MS);
        assertSame(id, est.id());
        assertArrayEquals(new byte[] {7, 7, 7}, est.privateData(), "the accept's private data");
        assertEquals(QpState.RTS, id.queuePair().state());
        assertEquals(acceptingPort, id.remoteAddress().getPort());
        child.awaitLine("ESTABLISHED 0", WAIT_MS, TimeUnit.MILLISECONDS);

        id.disconnect();
        side.expect(CmEventType.DISCONNECTED, WAIT_MS);
        assertEquals(QpState.ERROR, id.queuePair().state());
        child.awaitLine("DISCONNECTED 0", WAIT_MS, TimeUnit.MILLISECONDS);
        assertEquals("QP ERROR", child.awaitLine("QP", WAIT_MS, TimeUnit.MILLISECONDS), "the child disconnected in turn");
    }

    @Test
    void unansweredRequestToAnotherProcessEndsUnreachableAtTheTimeout() throws Exception {
        CmId id = side.resolved(loopback(silentPort));
        long t0 = System.nanoTime();
        id.connect(new ConnectionParameters().connectTimeoutMs(200));
        child.awaitLine("CONNECT_REQUEST", WAIT_MS, TimeUnit.MILLISECONDS);
        CmEvent e = side.expect(CmEventType.UNREACHABLE, WAIT_MS);
        assertEquals(-Errno.ETIMEDOUT, e.status());
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(200), "not before the connect timeout");
    }

    @Test
    void requestFromAnotherProcessIsAcceptedHere() throws Exception {
        // The child connected to parentListener as it started.
        CmEvent req = listenerSide.expect(CmEventType.CONNECT_REQUEST, WAIT_MS);
        assertSame(parentListener, req.listenId());
        assertEquals(5, req.privateData()[0]);
        CmId passive = listenerSide.adopt(req.id());
        passive.createQueuePair(listenerSide.pd, listenerSide.attrs());
        passive.accept(new ConnectionParameters().privateData(new byte[] {9, 9}));
        assertEquals(QpState.RTS, passive.queuePair().state());
        assertTrue(child.awaitLine("ACTIVE ESTABLISHED", WAIT_MS, TimeUnit.MILLISECONDS).endsWith(" 0909"));
        assertSame(passive, listenerSide.expect(CmEventType.ESTABLISHED, WAIT_MS).id(), "after the child's RTU");
        passive.close(); // a DREQ
        child.awaitLine("ACTIVE DISCONNECTED", WAIT_MS, TimeUnit.MILLISECONDS);
    }
}
