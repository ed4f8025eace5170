package io.jsdp;

import java.util.Map;

/**
 * jsdp's management interface, registered as {@value #OBJECT_NAME} in the platform MBean server when
 * the provider opens its first socket (never failing the application when there is no MBean server).
 * {@code java -jar jsdp.jar stat <pid>} and {@code dump <pid>} read it through the attach API; any
 * JMX client can too.
 *
 * <p>SDP totals cover every connection of the JVM's SDP stack, live and closed. Receiver-not-ready
 * retries are counted where the device counts them per queue pair (SoftRdma); on DiSNI hardware, where
 * libibverbs has no such count, they read -1, "not available".
 */
public interface SdpMXBean {
    /** The MBean's name. */
    String OBJECT_NAME = "io.jsdp:type=Sdp";

    /**
     * The RDMA device SDP uses.
     *
     * @return e.g. {@code "soft0 (soft)"}, {@code "none: no RDMA device: ..."} or {@code "not opened yet"}
     */
    String getDevice();

    /**
     * Sockets the provider lists now: open stream channels (SDP or TCP) and bound listeners.
     *
     * @return the sockets, by id
     */
    SdpSocketInfo[] getSockets();

    /** @return SDP connections created (connecting or accepted) */
    long getSdpConnectionsOpened();

    /** @return SDP connections that completed the handshake */
    long getSdpConnectionsEstablished();

    /** @return SDP connections whose resources are not released yet */
    long getSdpConnectionsLive();

    /** @return SDP connections that ended (well or not) and released their resources */
    long getSdpConnectionsReleased();

    /** @return failed SDP connections by failure kind ({@code RESET_BY_PEER}, {@code ABORTED}, ...) */
    Map<String, Long> getSdpFailures();

    /** @return SDP payload bytes sent, every connection */
    long getBytesSent();

    /** @return SDP payload bytes received, every connection */
    long getBytesReceived();

    /** @return SDP messages sent, control messages included */
    long getMessagesSent();

    /** @return SDP messages received */
    long getMessagesReceived();

    /** @return SDP writer stalls for want of credits */
    long getCreditStalls();

    /** @return time SDP writers spent stalled for want of credits, in nanoseconds */
    long getCreditStallNanos();

    /**
     * Receiver-not-ready retries: times an SDP send found no receive buffer posted at the peer and the
     * device waited for one. NIC-assisted flow control makes them by design when the reader is slow;
     * credit-based and packetized flow control never should (they connect with an RNR retry count of 0,
     * so an RNR ends the connection with an FFDC record).
     *
     * @return the count over every connection, or -1 when the device does not count them per queue pair
     *     (DiSNI: read the port's hardware counters instead, see {@code docs/operations.md})
     */
    long getRnrRetries();

    /** @return zero-copy transfers: writes whose buffer the peer read in place (SrcAvail / RDMA READ, issue 9) */
    long getZeroCopyTransfers();

    /**
     * Stream connections that went to TCP, by reason: {@code no-listener}, {@code unreachable},
     * {@code timeout}, {@code rule}, {@code socket-option}, {@code no-device}, {@code peer-tcp} (a TCP
     * client reached a jsdp listener), {@code other}.
     *
     * @return counts since the JVM started (kinds never seen are absent)
     */
    Map<String, Long> getFallbacks();

    /** @return payload bytes written on TCP fallback connections */
    long getTcpBytesSent();

    /** @return payload bytes read on TCP fallback connections */
    long getTcpBytesReceived();

    /**
     * How blocked operations spin before they park: {@code jsdp.spin.adaptive}'s mode, whether
     * spinning is on now, and what decided it (preemptions of spinners, looks at the machine's
     * runnable threads).
     *
     * @return one line, e.g. {@code "adaptive, on; preemptions 3, ..."}
     */
    String getSpinning();

    /**
     * The caps on SDP connections ({@code jsdp.limit.connections}, {@code jsdp.limit.handshakes}), what is
     * held of them, and the connects and requests that met a cap (those went over TCP).
     *
     * @return one line, e.g. {@code "connections 3/16384, in set-up 0/256; connects over the limits 0, requests refused 0"}
     */
    String getLimits();

    /**
     * What jsdp's agent did with Netty's native transports (epoll, io_uring, kqueue, and those shaded into
     * grpc-netty-shaded), which would bypass the provider: forced to NIO ({@code jsdp.agent.netty.forceNio}),
     * or left alone and why.
     *
     * @return e.g. {@code "forced to NIO (jsdp.agent.netty.forceNio): io.netty.transport.noNative=true ..."}
     */
    String getNettyNativeTransports();

    /**
     * The trace levels now, in {@code jsdp.trace} syntax.
     *
     * @return e.g. {@code "*:2,provider:4"}
     */
    String getTrace();

    /**
     * Changes the trace levels at run time ({@code java -jar jsdp.jar trace <pid> <levels>}); the whole
     * specification is checked before anything changes.
     *
     * @param levels e.g. {@code "*:2,sdp:4"} ({@code jsdp.trace} syntax)
     * @throws IllegalArgumentException naming the bad entry; the levels are then unchanged
     */
    void setTrace(String levels);

    /**
     * A full snapshot: totals, every socket with its SDP connection's state, connections of the stack
     * no socket holds (closing, or not accepted yet), trace levels, the flight recorder and the FFDC
     * records kept in memory.
     *
     * @return several lines of text
     */
    String dump();
}
