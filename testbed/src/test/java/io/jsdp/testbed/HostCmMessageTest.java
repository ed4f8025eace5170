package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The connection-manager messages ({@link CmMessage}): each type decodes to what was encoded, anything
 * malformed is named, and a malformed message reaching a node is dropped without harm.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostCmMessageTest {
    private static final XpEndpoint ENDPOINT = new XpEndpoint(7, 8, 9L, 10L, 640_000L);

    private static CmMessage wrapped(ByteBuffer b) {
        CmMessage m = new CmMessage();
        assertNull(m.wrap(b), "well-formed");
        return m;
    }

    @Test
    void everyTypeDecodesToWhatWasEncoded() throws Exception {
        InetSocketAddress dst = new InetSocketAddress(InetAddress.getLoopbackAddress(), 4791);
        InetSocketAddress src = new InetSocketAddress(InetAddress.getByName("::1"), 50_000);
        ConnectionParameters p = new ConnectionParameters().retryCount(3).rnrRetryCount(7);
        byte[] data = new byte[ConnectionParameters.MAX_CONNECT_PRIVATE_DATA];
        Arrays.fill(data, (byte) 0x5a);
        CmMessage m = wrapped(CmMessage.req(11, dst, src, p, ENDPOINT, data));
        assertEquals(CmMessage.REQ, m.type());
        assertEquals(0, m.to());
        assertEquals(11, m.from());
        assertEquals(dst, m.destination());
        assertEquals(src, m.source());
        assertEquals(3, m.retryCount());
        assertEquals(7, m.rnrRetryCount());
        assertEquals(ENDPOINT, m.endpoint());
        assertArrayEquals(data, m.privateData());

        m = wrapped(CmMessage.rep(11, 12, ENDPOINT, new byte[ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA]));
        assertEquals(CmMessage.REP, m.type());
        assertEquals(11, m.to());
        assertEquals(12, m.from());
        assertEquals(ENDPOINT, m.endpoint());
        assertEquals(ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA, m.privateData().length);

        m = wrapped(CmMessage.rej(11, 0, CmEvent.REJECT_CONSUMER, new byte[] {42}));
        assertEquals(CmMessage.REJ, m.type());
        assertEquals(CmEvent.REJECT_CONSUMER, m.status());
        assertArrayEquals(new byte[] {42}, m.privateData());
        assertEquals(0, wrapped(CmMessage.rej(1, 2, -Errno.ETIMEDOUT, null)).privateData().length);

        assertEquals(CmMessage.RTU, wrapped(CmMessage.rtu(1, 2)).type());
        m = wrapped(CmMessage.dreq(3, 4));
        assertEquals(CmMessage.DREQ, m.type());
        assertEquals(3, m.to());
        assertEquals(4, m.from());
    }

    @Test
    void malformedMessagesAreNamed() {
        InetSocketAddress a = new InetSocketAddress(InetAddress.getLoopbackAddress(), 1);
        ByteBuffer req = CmMessage.req(1, a, a, new ConnectionParameters(), ENDPOINT, new byte[] {1, 2});
        ByteBuffer[] bad = {
            ByteBuffer.allocate(CmMessage.HEADER_BYTES - 1),                         // short header
            CmMessage.rtu(1, 2).put(CmMessage.TYPE_OFFSET, (byte) 99),                // unknown type
            ByteBuffer.allocate(CmMessage.HEADER_BYTES + 1).put(0, (byte) CmMessage.DREQ), // DREQ with a body
            req.duplicate().limit(req.limit() - 1),                                   // data cut short
            copyWith(req, req.limit() - 4, (short) 0x7fff),                           // data longer than the rest
            copyWith(req, CmMessage.REQ_DST_LEN_OFFSET, (byte) 5),                     // address length 5
            copyWith(req, CmMessage.REQ_RETRY_OFFSET, (byte) 8),                       // retry count 8
            CmMessage.rej(1, 2, 0, new byte[ConnectionParameters.MAX_REJECT_PRIVATE_DATA + 1]), // too much data
        };
        for (int i = 0; i < bad.length; i++) {
            assertNotNull(new CmMessage().wrap(bad[i]), "case " + i + " is malformed");
        }
    }

    private static ByteBuffer copyWith(ByteBuffer b, int at, byte v) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining()).put(b.duplicate()).flip();
        return c.put(at, v);
    }

    private static ByteBuffer copyWith(ByteBuffer b, int at, short v) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining()).put(b.duplicate()).flip();
        return c.putShort(at, v);
    }

    @Test
    void malformedMessageIsDroppedAndConnectionsStillWork() throws Exception {
        try (SoftDevice d = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY)) {
            HostCmSide s = new HostCmSide(d);
            try {
                ShmNode node = d.host().node();
                HostCm cm = d.host().cm();
                long received = cm.messagesReceived();
                long sent = cm.messagesSent();
                // Garbage: it reaches no id, and nothing answers it. A REP for an id that is no more is
                // answered with a REJ (which finds nobody either).
                assertEquals(ShmNode.SENT, node.sendMessage(node.id(), HostCm.MESSAGE_KIND, ByteBuffer.wrap(new byte[] {9})));
                assertEquals(ShmNode.SENT, node.sendMessage(node.id(), HostCm.MESSAGE_KIND,
                    CmMessage.rep(Long.MAX_VALUE, 5, ENDPOINT, null)));
                CmId listener = s.listen(1);
                CmId id = s.resolved(listener.localAddress());
                id.connect(new ConnectionParameters());
                CmId child = s.adopt(s.expect(CmEventType.CONNECT_REQUEST, 5_000).id());
                child.createQueuePair(s.pd, s.attrs());
                child.accept(new ConnectionParameters());
                CmEvent first = s.expect(CmEventType.ESTABLISHED, 5_000);
                CmEvent second = s.expect(CmEventType.ESTABLISHED, 5_000);
                assertEquals(id, first.id());
                assertEquals(child, second.id());
                assertEquals(6, cm.messagesReceived() - received, "the garbage, the stray REP, its REJ, REQ, REP, RTU");
                assertEquals(4, cm.messagesSent() - sent, "the REJ, REQ, REP, RTU: nothing answered the garbage");
            } finally {
                s.close();
            }
            assertEquals(0, d.resources().openCount(), () -> d.resources().report());
        }
    }
}
