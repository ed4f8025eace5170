package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test fixture of the host connection-manager tests: one side's protection domain, completion queue
 * and event channel on a device, and the ids made through it, all closed by {@link #close()}.
 */
final class HostCmSide implements AutoCloseable {
    final SoftDevice device;
    final ProtectionDomain pd;
    final CompletionQueue cq;
    final CmEventChannel events;
    private final List<CmId> ids = new ArrayList<>();

    HostCmSide(SoftDevice device) throws Exception {
        this.device = device;
        this.pd = device.allocateProtectionDomain();
        this.cq = device.createCompletionQueue(null, 256);
        this.events = device.createEventChannel();
    }

    QueuePairAttributes attrs() {
        return new QueuePairAttributes().sendCq(cq).recvCq(cq).maxSendWr(4).maxRecvWr(4);
    }

    /** A new id on this side's channel, closed with the side. */
    CmId id() throws Exception {
        return adopt(device.createId(events));
    }

    /** Closes {@code id} with the side (a passive id from a CONNECT_REQUEST). */
    CmId adopt(CmId id) {
        ids.add(id);
        return id;
    }

    /** A listener on an ephemeral loopback port. */
    CmId listen(int backlog) throws Exception {
        CmId l = id();
        l.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        l.listen(backlog);
        return l;
    }

    /** An id resolved to {@code to}, with a queue pair. */
    CmId resolved(InetSocketAddress to) throws Exception {
        CmId id = id();
        id.resolveAddress(to, 1000);
        expect(CmEventType.ADDR_RESOLVED, 5_000);
        id.resolveRoute(1000);
        expect(CmEventType.ROUTE_RESOLVED, 5_000);
        id.createQueuePair(pd, attrs());
        return id;
    }

    /** The next event, which must be {@code type} and come within {@code ms}. */
    CmEvent expect(CmEventType type, long ms) throws Exception {
        CmEvent e = events.poll(TimeUnit.MILLISECONDS.toNanos(ms));
        assertNotNull(e, "no CM event within " + ms + " ms, expected " + type);
        assertEquals(type, e.type(), () -> "unexpected CM event " + e);
        return e;
    }

    /** The next event within {@code ms}, or null. */
    CmEvent next(long ms) throws Exception {
        return events.poll(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    @Override
    public void close() throws VerbsException {
        for (int i = ids.size() - 1; i >= 0; i--) {
            ids.get(i).close();
        }
        ids.clear();
        events.close();
        cq.close();
        pd.close();
    }
}
