package io.jsdp.flow.engine;

/**
 * Why a connection failed or could not be established. The provider maps each to the JDK exception
 * TCP would give ({@link #tcpMessage()} is the JDK's text for it).
 */
public enum Failure {
    /** No SDP listener at the destination (TCP: RST to the SYN). */
    CONNECTION_REFUSED("Connection refused"),
    /**
     * An SDP listener is there but refused the connection for now ({@link RejectReason}: its backlog is
     * full, it is at a limit, it has no resources); the provider connects over TCP instead.
     */
    PEER_BUSY("Connection refused"),
    /** The destination could not be resolved or reached. */
    UNREACHABLE("No route to host"),
    /** The connection manager or the Hello exchange did not finish in time. */
    CONNECT_TIMEOUT("Connect timed out"),
    /** The peer aborted (AbortConn, or a disconnect without DisConn). */
    RESET_BY_PEER("Connection reset"),
    /** The peer broke the protocol; see the FFDC record. */
    PROTOCOL_VIOLATION("Connection reset"),
    /** The queue pair failed (error completion, post failure, overflow); see the FFDC record. */
    DEVICE_ERROR("Connection reset"),
    /** A structure marker around one of the connection's buffers was overwritten; see the FFDC record. */
    CORRUPTION("Connection reset"),
    /** A keepalive probe found the peer gone. */
    KEEPALIVE_TIMEOUT("Connection timed out"),
    /** A graceful close did not finish in time and was made abortive. */
    CLOSE_TIMEOUT("Connection reset"),
    /** This side aborted: linger 0, close with unread data, or {@link SdpConnection#abort()}. */
    ABORTED("Socket closed"),
    /** The stack the connection belongs to was closed. */
    STACK_CLOSED("Socket closed");

    private final String tcpMessage;

    Failure(String tcpMessage) {
        this.tcpMessage = tcpMessage;
    }

    /**
     * The message the JDK's TCP sockets give for the same condition.
     *
     * @return e.g. "Connection reset"
     */
    public String tcpMessage() {
        return tcpMessage;
    }
}
