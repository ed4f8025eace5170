package io.jsdp.provider;

/**
 * Why a stream connection went to TCP, as a counter key. The reasons in words are made where the
 * decision is taken ({@link SdpSocketChannel}, {@link SdpRuntime}, {@link SdpServerSocketChannel});
 * {@link #of} sorts them by their fixed openings, which {@code FallbackStatisticsTest} pins.
 */
enum Fallback {
    /** The destination has no SDP listener (the RDMA CM refused). */
    NO_LISTENER("no-listener", "no SDP listener"),
    /** No RDMA route to the destination. */
    UNREACHABLE("unreachable", "no RDMA route"),
    /** The SDP connect timed out. */
    TIMEOUT("timeout", "SDP connect to "),
    /** A {@code jsdp.rules} rule says TCP. */
    RULE("rule", "rules:"),
    /** {@code SdpSocketOptions.USE_SDP} is false on the socket. */
    SOCKET_OPTION("socket-option", "SDP turned off"),
    /** The JVM has no RDMA device. */
    NO_DEVICE("no-device", "no RDMA device"),
    /**
     * A listener's SDP side could not be opened (the device refused, the rendezvous directory's lock
     * stayed held): it listens on TCP only. Counted once per listener.
     */
    LISTEN_FAILED("listen-failed", Fallback.LISTEN_FAILED_OPENING),
    /**
     * The connect could not have its SDP resources here: the device's memory (SoftRdma: a full
     * rendezvous file system, /dev/shm), its memory keys.
     */
    NO_RESOURCES("resources", Fallback.NO_RESOURCES_OPENING),
    /**
     * This JVM's SDP stack is at one of its limits ({@code jsdp.limit.connections},
     * {@code jsdp.limit.handshakes}): the connect went to TCP without allocating anything for SDP.
     */
    LIMIT("limit", io.jsdp.flow.engine.ConnectionLimits.REACHED_OPENING),
    /**
     * The peer's SDP listener refused the connection for now: its backlog was full, its stack at a limit,
     * or without resources (a bare reject without a reason counts as {@link #NO_LISTENER}).
     */
    PEER_BUSY("peer-busy", Fallback.PEER_BUSY_OPENING),
    /** A TCP client reached a jsdp listener (the accepting side). */
    PEER_TCP("peer-tcp", "the peer connected over TCP"),
    /** Anything else. */
    OTHER("other", null);

    /** How the reason of {@link #NO_RESOURCES} opens. */
    static final String NO_RESOURCES_OPENING = "no SDP resources";
    /** How the reason of {@link #PEER_BUSY} opens. */
    static final String PEER_BUSY_OPENING = "SDP peer busy";
    /** How the reason of {@link #LISTEN_FAILED} opens. */
    static final String LISTEN_FAILED_OPENING = "SDP listen failed";

    private static final Fallback[] ALL = values();

    private final String key;
    private final String opening;

    Fallback(String key, String opening) {
        this.key = key;
        this.opening = opening;
    }

    /** The counter key, e.g. {@code "no-listener"}. */
    String key() {
        return key;
    }

    static Fallback of(String reason) {
        if (reason != null) {
            for (Fallback f : ALL) {
                if (f.opening != null && reason.startsWith(f.opening)) {
                    return f;
                }
            }
        }
        return OTHER;
    }
}
