package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 29: the host fabric's connection manager takes a request only as a TCP listener would. A
 * listener bound to 127.0.0.1 refuses a connect to 127.0.0.2 on its port, and takes one to 127.0.0.1
 * from the source address routing picks; a request whose claimed source is no address of this host
 * (forged here as raw message bytes: jsdp's own ids never send one) is refused with a REJ, and the
 * listener never hears of it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostCmAddressTest {
    private static final XpEndpoint ENDPOINT = new XpEndpoint(7, 8, 9L, 10L, 640_000L);

    @Test
    void aListenerTakesOnlyRequestsForItsAddressFromAnAddressOfThisHost() throws Exception {
        try (SoftDevice d = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY)) {
            HostCmSide s = new HostCmSide(d);
            try {
                CmId listener = s.listen(4);
                int port = listener.localAddress().getPort();

                CmId other = s.resolved(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), port));
                other.connect(new ConnectionParameters());
                CmEvent refused = s.expect(CmEventType.REJECTED, 5_000);
                assertEquals(other, refused.id());
                assertEquals(-Errno.ECONNREFUSED, refused.status());

                HostCm cm = d.host().cm();
                ShmNode node = d.host().node();
                long sent = cm.messagesSent();
                long received = cm.messagesReceived();
                InetSocketAddress forged = new InetSocketAddress(InetAddress.getByName("10.255.255.1"), 40_000);
                assertEquals(ShmNode.SENT, node.sendMessage(node.id(), HostCm.MESSAGE_KIND,
                    CmMessage.req(Long.MAX_VALUE, listener.localAddress(), forged, new ConnectionParameters(), ENDPOINT,
                        new byte[0])));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (cm.messagesReceived() - received < 2) { // the REQ, then the REJ it drew (for nobody)
                    assertTrue(System.nanoTime() < deadline, "the forged request was not answered");
                    Thread.sleep(5);
                }
                assertEquals(1, cm.messagesSent() - sent, "the REJ (the forged REQ went round the CM)");
                assertNull(s.next(200), "the listener heard of the forged request");

                CmId id = s.resolved(listener.localAddress());
                assertEquals(InetAddress.getLoopbackAddress(), id.localAddress().getAddress());
                id.connect(new ConnectionParameters());
                CmEvent request = s.expect(CmEventType.CONNECT_REQUEST, 5_000);
                assertEquals(id.localAddress(), s.adopt(request.id()).remoteAddress());
                assertEquals(listener.localAddress(), request.id().localAddress());
                request.id().reject(null);
                assertEquals(CmEventType.REJECTED, s.expect(CmEventType.REJECTED, 5_000).type());
            } finally {
                s.close();
            }
            assertEquals(0, d.resources().openCount(), () -> d.resources().report());
        }
    }
}
