package io.jsdp.testbed;

import static io.jsdp.verbs.conformance.Connection.expectEvent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.conformance.Connection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The soft CM's listener backlog: connect requests not yet accepted or rejected count against it, and a
 * request beyond it is refused at once. (Hardware CMs treat the backlog loosely, so this is not in the
 * device-agnostic suite.)
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ListenerBacklogTest extends TwoDeviceTest {

    @Test
    void connectBeyondTheListenerBacklogIsRejected() throws Exception {
        conn = Connection.prepare(devA, devB, new Connection.Options());
        Connection c = conn;
        c.listener.close();
        c.listener = devB.createId(c.evB);
        c.listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        c.listener.listen(1);
        CmEventChannel events = devA.createEventChannel();
        CmId first = null;
        CmId second = null;
        try {
            first = resolvedId(c, events);
            first.connect(new ConnectionParameters());
            CmId pending = expectEvent(c.evB, CmEventType.CONNECT_REQUEST).id();
            second = resolvedId(c, events);
            second.connect(new ConnectionParameters());
            CmEvent refused = expectEvent(events, CmEventType.REJECTED);
            assertSame(second, refused.id(), "one unanswered request fills a backlog of 1");
            assertEquals(-Errno.ECONNREFUSED, refused.status());
            pending.close();
            assertSame(first, expectEvent(events, CmEventType.REJECTED).id(), "the dropped request is refused");
            // the slot is free again
            CmId third = resolvedId(c, events);
            try {
                third.connect(new ConnectionParameters());
                expectEvent(c.evB, CmEventType.CONNECT_REQUEST).id().close();
                expectEvent(events, CmEventType.REJECTED);
            } finally {
                third.close();
            }
        } finally {
            for (CmId id : new CmId[] {first, second}) {
                if (id != null) {
                    id.close();
                }
            }
            events.close();
        }
    }

    /** A new id of A, resolved to B's listener, with a queue pair. */
    private static CmId resolvedId(Connection c, CmEventChannel events) throws Exception {
        CmId id = c.a.createId(events);
        id.resolveAddress(c.listener.localAddress(), 1000);
        expectEvent(events, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(1000);
        expectEvent(events, CmEventType.ROUTE_RESOLVED);
        id.createQueuePair(c.pdA, new QueuePairAttributes().sendCq(c.cqA).recvCq(c.cqA));
        return id;
    }
}
