package io.jsdp;

import java.net.SocketOption;

/** jsdp's own socket options, on the channels of {@link SdpSelectorProvider}. */
public final class SdpSocketOptions {
    /**
     * Read-only: how the connection travels. Starts with {@code "sdp"} when over SDP, then names the
     * device and the flow control (e.g. {@code "sdp device=soft0 provider=soft flowControl=credit"}),
     * or with {@code "tcp"} when it fell back to TCP, then gives the reason
     * (e.g. {@code "tcp (no SDP listener at /127.0.0.1:8080)"}). Null before the channel is connected.
     */
    public static final SocketOption<String> TRANSPORT = new Option<>("jsdp.TRANSPORT", String.class);

    /**
     * Whether a connect may use SDP ({@code Boolean}, default {@code true}, or what the {@code jsdp.rules}
     * file says for the destination). Set {@code false} before connecting to go straight to TCP; the
     * transport then says {@code "tcp (SDP turned off on this socket)"}.
     */
    public static final SocketOption<Boolean> USE_SDP = new Option<>("jsdp.USE_SDP", Boolean.class);

    /**
     * The flow-control scheme ({@code String}): {@code "credit"}, {@code "packetized"} or {@code "nic"}
     * (NIC-assisted), seed 001 ch. 4 and {@code docs/configuration.md}. Set it on a socket before it
     * connects, or on a server socket before it binds, to ask for that scheme (default: the
     * {@code jsdp.flowControl} property or the rule's {@code flowControl}); the connection uses it when the
     * peer asks for the same, else credit-based. Read on a connected SDP socket it gives the scheme the
     * connection negotiated; on a TCP connection, null.
     */
    public static final SocketOption<String> FLOW_CONTROL = new Option<>("jsdp.FLOW_CONTROL", String.class);

    /**
     * The zero-copy threshold of this socket ({@code Integer}, bytes): a blocking write of a buffer from
     * {@link Sdp#allocateDirect} with at least this many bytes remaining is read by the peer straight
     * from the buffer (SrcAvail / RDMA READ) instead of being copied; 0 turns zero copy off. Default
     * {@code jsdp.zcopy.threshold} or the rules file's {@code zcopyThreshold}; may be changed at any time.
     * Must be 0 or at least 4096. No effect on a connection that fell back to TCP.
     */
    public static final SocketOption<Integer> ZCOPY_THRESHOLD = new Option<>("jsdp.ZCOPY_THRESHOLD", Integer.class);

    /**
     * How long, in nanoseconds, a blocked read or write on this SDP socket polls before its thread parks:
     * the upper bound of the connection's adaptive spin window. Defaults to {@code jsdp.spinNs} or the
     * rules file's {@code spinNs}; 0 parks at once; may be changed at any time. No effect on a connection
     * that fell back to TCP.
     */
    public static final SocketOption<Long> SPIN_NS = new Option<>("jsdp.SPIN_NS", Long.class);

    private SdpSocketOptions() {
    }

    private record Option<T>(String name, Class<T> type) implements SocketOption<T> {
        @Override
        public String toString() {
            return name;
        }
    }
}
