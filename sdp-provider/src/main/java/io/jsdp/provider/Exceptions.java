package io.jsdp.provider;

import io.jsdp.flow.engine.Failure;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;

/**
 * The one table from engine failures to the exceptions the JDK's TCP channels throw for the same
 * condition (style habit 6), with the JDK's messages.
 */
final class Exceptions {
    private Exceptions() {
    }

    /**
     * The exception for a failed connect.
     *
     * @param f the failure
     * @return the JDK's exception for it
     */
    static IOException forConnect(Failure f) {
        return switch (f) {
            case CONNECTION_REFUSED -> new ConnectException("Connection refused");
            case UNREACHABLE -> new NoRouteToHostException("No route to host");
            case CONNECT_TIMEOUT -> new ConnectException("Connection timed out");
            case ABORTED, STACK_CLOSED -> new ClosedChannelException();
            default -> new ConnectException(f.tcpMessage());
        };
    }

    /**
     * The exception for a read or write on a failed connection. The JDK's channels differ by
     * operation: a read after a reset throws {@code SocketException("Connection reset")}, a write
     * {@code IOException("Connection reset by peer")} (the errno text).
     *
     * @param f the failure
     * @param write whether the failing operation was a write
     * @return the JDK's exception for it
     */
    static IOException forTransfer(Failure f, boolean write) {
        return switch (f) {
            case ABORTED, STACK_CLOSED -> new ClosedChannelException();
            case KEEPALIVE_TIMEOUT -> write ? new IOException("Connection timed out") : new SocketException("Connection timed out");
            default -> write ? new IOException("Connection reset by peer") : new SocketException("Connection reset");
        };
    }
}
