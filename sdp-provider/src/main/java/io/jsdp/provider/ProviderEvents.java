package io.jsdp.provider;

import io.jsdp.flow.events.ConnectionClosedEvent;
import io.jsdp.flow.events.ConnectionEstablishedEvent;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;

/**
 * The Flight Recorder events of TCP fallback connections (the SDP ones come from the engine): the same
 * {@code io.jsdp.ConnectionEstablished} and {@code io.jsdp.ConnectionClosed} events, with transport
 * {@code "tcp"}. With no recording running, each costs a check.
 */
final class ProviderEvents {
    private ProviderEvents() {
    }

    static void tcpEstablished(SocketChannel t, String reason, boolean active) {
        ConnectionEstablishedEvent e = new ConnectionEstablishedEvent();
        if (!e.shouldCommit()) {
            return;
        }
        Socket s = t.socket();
        e.connectionId = -1;
        e.transport = "tcp";
        e.reason = reason;
        e.local = SocketRegistry.endpoint((InetSocketAddress) s.getLocalSocketAddress());
        e.remote = SocketRegistry.endpoint((InetSocketAddress) s.getRemoteSocketAddress());
        e.active = active;
        e.commit();
    }

    static void tcpClosed(SocketChannel t, long bytesSent, long bytesReceived) {
        ConnectionClosedEvent e = new ConnectionClosedEvent();
        if (!e.shouldCommit()) {
            return;
        }
        Socket s = t.socket();
        e.connectionId = -1;
        e.transport = "tcp";
        e.local = SocketRegistry.endpoint((InetSocketAddress) s.getLocalSocketAddress());
        e.remote = SocketRegistry.endpoint((InetSocketAddress) s.getRemoteSocketAddress());
        e.bytesSent = bytesSent;
        e.bytesReceived = bytesReceived;
        e.commit();
    }
}
