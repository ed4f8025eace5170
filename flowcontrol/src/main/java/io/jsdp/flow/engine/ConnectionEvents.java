package io.jsdp.flow.engine;

import io.jsdp.flow.engine.SdpConnection.ConnectionStats;
import io.jsdp.flow.events.ConnectionClosedEvent;
import io.jsdp.flow.events.ConnectionEstablishedEvent;
import io.jsdp.flow.events.CreditStallEvent;
import java.net.InetSocketAddress;

/**
 * The engine's Java Flight Recorder events. Each method first asks whether a recording wants the
 * event: with JFR off that is the whole cost (the event object never escapes and is not allocated).
 */
final class ConnectionEvents {
    private ConnectionEvents() {
    }

    static void established(SdpConnection c, String device, InetSocketAddress local, InetSocketAddress remote) {
        ConnectionEstablishedEvent e = new ConnectionEstablishedEvent();
        if (!e.shouldCommit()) {
            return;
        }
        e.connectionId = c.id();
        e.transport = "sdp";
        e.flowControl = c.flowControl();
        e.device = device;
        e.local = endpoint(local);
        e.remote = endpoint(remote);
        e.active = c.isActive();
        e.commit();
    }

    static void closed(SdpConnection c, InetSocketAddress local, InetSocketAddress remote, ConnectionStats s,
                       String failure) {
        ConnectionClosedEvent e = new ConnectionClosedEvent();
        if (!e.shouldCommit()) {
            return;
        }
        e.connectionId = c.id();
        e.transport = "sdp";
        e.local = endpoint(local);
        e.remote = endpoint(remote);
        e.bytesSent = s.bytesSent();
        e.bytesReceived = s.bytesReceived();
        e.messagesSent = s.messagesSent();
        e.messagesReceived = s.messagesReceived();
        e.creditStalls = s.creditStalls();
        e.creditStallTime = s.creditStallNs();
        e.rnrRetries = s.rnrRetries();
        e.failure = failure;
        e.commit();
    }

    /** The event of a stall that begins, begun; null when no recording wants it. */
    static CreditStallEvent stallBegins(SdpConnection c, InetSocketAddress remote, int credits) {
        CreditStallEvent e = new CreditStallEvent();
        if (!e.isEnabled()) {
            return null;
        }
        e.begin();
        e.connectionId = c.id();
        e.remote = endpoint(remote);
        e.credits = credits;
        return e;
    }

    /** {@code address:port} as {@code jsdp.jar stat} prints it, or null. */
    static String endpoint(InetSocketAddress a) {
        if (a == null) {
            return null;
        }
        if (a.isUnresolved() || a.getAddress() == null) {
            return a.getHostString() + ":" + a.getPort();
        }
        String host = a.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    static void stallEnds(CreditStallEvent e, boolean byClose) {
        if (e == null) {
            return;
        }
        e.end();
        if (e.shouldCommit()) {
            e.endedByClose = byClose;
            e.commit();
        }
    }
}
