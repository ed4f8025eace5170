package io.jsdp;

import javax.management.ConstructorParameters;

/**
 * One socket of a JVM's jsdp provider, as {@link SdpMXBean#getSockets()} lists it and
 * {@code java -jar jsdp.jar stat <pid>} prints it: a stream connection (over SDP, or over TCP after a
 * fallback) or a listener. Strings are empty, numbers {@code -1}, where a value does not apply.
 */
public final class SdpSocketInfo {
    private final long id;
    private final String kind;
    private final String transport;
    private final String fallbackKind;
    private final String reason;
    private final String local;
    private final String remote;
    private final String state;
    private final String flowControl;
    private final int credits;
    private final long bytesSent;
    private final long bytesReceived;
    private final long messagesSent;
    private final long messagesReceived;
    private final long creditStalls;
    private final long zeroCopyTransfers;
    private final long rnrRetries;
    private final long connectionId;
    private final String failure;
    private final String device;

    /**
     * Creates the description.
     *
     * @param id the socket's number in this JVM (in order of creation)
     * @param kind {@code "stream"} or {@code "listen"}
     * @param transport {@code "sdp"}, {@code "tcp"}, or for a listener {@code "sdp+tcp"} or {@code "tcp"}
     * @param fallbackKind why on TCP, as a word ({@code "no-listener"}, {@code "rule"}, ...), or empty
     * @param reason why on TCP, in words, or empty
     * @param local the local endpoint {@code address:port}, or empty
     * @param remote the remote endpoint {@code address:port}, or empty
     * @param state {@code CONNECTING}, {@code HANDSHAKE}, {@code ESTABLISHED}, {@code FINISHED},
     *     {@code FAILED} (SDP), {@code CONNECTING}, {@code ESTABLISHED} (TCP) or {@code LISTEN}
     * @param flowControl the SDP flow-control scheme, or empty
     * @param credits the SDP send credits left, or -1
     * @param bytesSent payload bytes sent (SDP: posted to the device), or -1
     * @param bytesReceived payload bytes received, or -1
     * @param messagesSent SDP messages sent, or -1
     * @param messagesReceived SDP messages received, or -1
     * @param creditStalls SDP credit stalls, or -1
     * @param zeroCopyTransfers SDP zero-copy transfers, or -1
     * @param rnrRetries SDP receiver-not-ready retries of the queue pair, or -1 (TCP, or a device that does not
     *     count them per queue pair, such as DiSNI's)
     * @param connectionId the SDP engine's connection id (as in traces and FFDC records), or -1
     * @param failure why the SDP connection failed, or empty
     * @param device the RDMA device, or empty
     */
    @ConstructorParameters({"id", "kind", "transport", "fallbackKind", "reason", "local", "remote", "state", "flowControl",
        "credits", "bytesSent", "bytesReceived", "messagesSent", "messagesReceived", "creditStalls", "zeroCopyTransfers", "rnrRetries",
        "connectionId", "failure", "device"})
    public SdpSocketInfo(long id, String kind, String transport, String fallbackKind, String reason, String local,
                         String remote, String state, String flowControl, int credits, long bytesSent, long bytesReceived,
                         long messagesSent, long messagesReceived, long creditStalls, long zeroCopyTransfers, long rnrRetries,
                         long connectionId, String failure, String device) {
        this.id = id;
        this.kind = kind;
        this.transport = transport;
        this.fallbackKind = fallbackKind;
        this.reason = reason;
        this.local = local;
        this.remote = remote;
        this.state = state;
        this.flowControl = flowControl;
        this.credits = credits;
        this.bytesSent = bytesSent;
        this.bytesReceived = bytesReceived;
        this.messagesSent = messagesSent;
        this.messagesReceived = messagesReceived;
        this.creditStalls = creditStalls;
        this.zeroCopyTransfers = zeroCopyTransfers;
        this.rnrRetries = rnrRetries;
        this.connectionId = connectionId;
        this.failure = failure;
        this.device = device;
    }

    /** @return the socket's number in this JVM */
    public long getId() {
        return id;
    }

    /** @return {@code "stream"} or {@code "listen"} */
    public String getKind() {
        return kind;
    }

    /** @return {@code "sdp"}, {@code "tcp"} or {@code "sdp+tcp"} */
    public String getTransport() {
        return transport;
    }

    /** @return why on TCP as a word, or empty */
    public String getFallbackKind() {
        return fallbackKind;
    }

    /** @return why on TCP in words, or empty */
    public String getReason() {
        return reason;
    }

    /** @return the local endpoint, or empty */
    public String getLocal() {
        return local;
    }

    /** @return the remote endpoint, or empty */
    public String getRemote() {
        return remote;
    }

    /** @return the state */
    public String getState() {
        return state;
    }

    /** @return the SDP flow-control scheme, or empty */
    public String getFlowControl() {
        return flowControl;
    }

    /** @return the SDP send credits left, or -1 */
    public int getCredits() {
        return credits;
    }

    /** @return payload bytes sent, or -1 */
    public long getBytesSent() {
        return bytesSent;
    }

    /** @return payload bytes received, or -1 */
    public long getBytesReceived() {
        return bytesReceived;
    }

    /** @return SDP messages sent, or -1 */
    public long getMessagesSent() {
        return messagesSent;
    }

    /** @return SDP messages received, or -1 */
    public long getMessagesReceived() {
        return messagesReceived;
    }

    /** @return SDP credit stalls, or -1 */
    public long getCreditStalls() {
        return creditStalls;
    }

    /** @return SDP zero-copy transfers, or -1 */
    public long getZeroCopyTransfers() {
        return zeroCopyTransfers;
    }

    /** @return SDP receiver-not-ready retries of the queue pair, or -1 (TCP, or a device that does not count them) */
    public long getRnrRetries() {
        return rnrRetries;
    }

    /** @return the SDP engine's connection id, or -1 */
    public long getConnectionId() {
        return connectionId;
    }

    /** @return why the SDP connection failed, or empty */
    public String getFailure() {
        return failure;
    }

    /** @return the RDMA device, or empty */
    public String getDevice() {
        return device;
    }

    /**
     * One line: id, kind, transport, state, endpoints, then what applies (flow control and credits,
     * bytes, the engine's connection id, the fallback reason, the failure).
     *
     * @return e.g. {@code "3 stream sdp ESTABLISHED 127.0.0.1:9000 -> 127.0.0.1:49152 flowControl=credit
     *     credits=15 sent=102400 received=102400 connection=1"}
     */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder(128).append(id).append(' ').append(kind).append(' ').append(transport).append(' ')
            .append(state).append(' ').append(local);
        if (!remote.isEmpty()) {
            b.append(" -> ").append(remote);
        }
        if (!flowControl.isEmpty()) {
            b.append(" flowControl=").append(flowControl).append(" credits=").append(credits);
        }
        if (bytesSent >= 0) {
            b.append(" sent=").append(bytesSent).append(" received=").append(bytesReceived);
        }
        if (connectionId >= 0) {
            b.append(" connection=").append(connectionId);
        }
        if (!reason.isEmpty()) {
            b.append(" (").append(reason).append(')');
        }
        if (!failure.isEmpty()) {
            b.append(" failed: ").append(failure);
        }
        return b.toString();
    }
}
