package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer process killed -9 (no close, no shutdown hook): every connection-manager id tied to it ends
 * within the 2 s bound, by state, and the dead process's port claims are reclaimed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostCmPeerDeathTest {
    private static final long WAIT_MS = 10_000;
    private static final long BOUND_MS = 2_000;

    private static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    @Test
    void killedPeersConnectionsEndWithinTwoSecondsAndItsPortsAreReclaimed() throws Exception {
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        try (HostCmSide side = new HostCmSide(device); HostCmSide passive = new HostCmSide(device)) {
            CmId listener = passive.listen(4);
            Rendezvous r = device.host().node().rendezvous();
            try (ChildJvm child = ChildJvm.start(HostCmChild.class, r.directory().toString(),
                    Integer.toString(listener.localAddress().getPort()))) {
                String[] ready = child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ");
                NodeId childNode = NodeId.parse(ready[1]);
                int acceptingPort = Integer.parseInt(ready[2]);
                int silentPort = Integer.parseInt(ready[3]);
                int boundPort = Integer.parseInt(ready[4]);

                // Established: this side active, the child accepted.
                CmId established = side.resolved(loopback(acceptingPort));
                established.connect(new ConnectionParameters());
                side.expect(CmEventType.ESTABLISHED, WAIT_MS);
                child.awaitLine("ESTABLISHED 0", WAIT_MS, TimeUnit.MILLISECONDS);
                // Connecting: the child's silent listener took the request and will never answer.
                CmId connecting = side.resolved(loopback(silentPort));
                connecting.connect(new ConnectionParameters().connectTimeoutMs(60_000));
                child.awaitLine("CONNECT_REQUEST", WAIT_MS, TimeUnit.MILLISECONDS);
                // Pending: the child's own request to our listener, not yet accepted.
                CmEvent req = passive.expect(CmEventType.CONNECT_REQUEST, WAIT_MS);
                CmId pending = passive.adopt(req.id());
                pending.createQueuePair(passive.pd, passive.attrs());

                long killedNs = System.nanoTime();
                child.kill();
                Map<CmId, CmEvent> ends = new HashMap<>();
                for (int i = 0; i < 2; i++) {
                    long leftNs = killedNs + TimeUnit.MILLISECONDS.toNanos(BOUND_MS) - System.nanoTime();
                    CmEvent e = side.events.poll(Math.max(0, leftNs));
                    assertNotNull(e, "both ids hear of the death within " + BOUND_MS + " ms of the kill; got " + ends);
                    ends.put(e.id(), e);
                }
                System.out.println("peer death reported " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs)
                    + " ms after kill -9 (includes reaping the child)");
                assertEquals(CmEventType.DISCONNECTED, ends.get(established).type());
                assertEquals(QpState.ERROR, established.queuePair().state(), "the established queue pair failed");
                assertEquals(CmEventType.UNREACHABLE, ends.get(connecting).type());
                assertEquals(-Errno.ETIMEDOUT, ends.get(connecting).status());
                assertNull(side.next(20), "one event each");

                // The dead process's request can no longer be accepted.
                pending.accept(new ConnectionParameters());
                CmEvent late = passive.expect(CmEventType.UNREACHABLE, WAIT_MS);
                assertSame(pending, late.id());
                assertEquals(-Errno.ETIMEDOUT, late.status());

                // The node's sweep reclaims the dead child's port claims and socket.
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MS + 1_000);
                for (int port : new int[] {acceptingPort, silentPort, boundPort}) {
                    while (r.listenerOwner(port) != null) {
                        assertTrue(System.nanoTime() < deadline, "cm-" + port + " of the dead child was not reclaimed");
                        Thread.sleep(20);
                    }
                }
                assertFalse(Files.exists(r.directory().resolve("node-" + childNode.token() + ".sock")));
                established.disconnect(); // our DISCONNECTED came from the death; nothing more to tell
                assertNull(side.next(20));
            }
        } finally {
            try {
                assertEquals(0, device.resources().openCount(), () -> device.resources().report());
                assertEquals(0, device.host().cm().registeredIds(), "closed ids leave the host CM");
            } finally {
                device.close();
            }
        }
    }
}
