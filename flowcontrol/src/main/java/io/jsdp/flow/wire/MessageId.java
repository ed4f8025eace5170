package io.jsdp.flow.wire;

/**
 * SDP message ids ({@code mid}, byte 0 of the BSDH), as the IBTA specification numbers them
 * ({@code ../shared/reference/sdp-wire.md} C.2). Ids 0x00–0x0F are control messages.
 */
public final class MessageId {
    /** Hello: the active side's first message, with the Hello header. */
    public static final int HELLO = 0x00;
    /** HelloAck: the passive side's answer to Hello. */
    public static final int HELLO_ACK = 0x01;
    /** DisConn: the sender will send no more data (half-close, like a TCP FIN). */
    public static final int DISCONN = 0x02;
    /** AbortConn: the sender aborted the connection (like a TCP RST). */
    public static final int ABORT_CONN = 0x03;
    /** SendSm: the data sink asks the source to finish a zero-copy transfer with buffer copy. */
    public static final int SEND_SM = 0x04;
    /** RdmaWrCompl: RDMA-written bytes of a SinkAvail. */
    public static final int RDMA_WR_COMPL = 0x05;
    /** RdmaRdCompl: RDMA-read bytes of a SrcAvail. */
    public static final int RDMA_RD_COMPL = 0x06;
    /** ModeChange. */
    public static final int MODE_CHANGE = 0x07;
    /** SrcAvailCancel. */
    public static final int SRC_AVAIL_CANCEL = 0x08;
    /** SinkAvailCancel. */
    public static final int SINK_AVAIL_CANCEL = 0x09;
    /** SinkCancelAck. */
    public static final int SINK_CANCEL_ACK = 0x0A;
    /** ChRcvBuf: asks the peer to change its receive-buffer size. */
    public static final int CH_RCV_BUF = 0x0B;
    /** ChRcvBufAck. */
    public static final int CH_RCV_BUF_ACK = 0x0C;
    /** SuspComm. */
    public static final int SUSP_COMM = 0x0D;
    /** SuspCommAck. */
    public static final int SUSP_COMM_ACK = 0x0E;
    /** SinkAvail: a zero-copy sink buffer advertisement. */
    public static final int SINK_AVAIL = 0xFD;
    /** SrcAvail: a zero-copy source buffer advertisement. */
    public static final int SRC_AVAIL = 0xFE;
    /** Data: ULP bytes after the BSDH; with no bytes it is a pure credit update. */
    public static final int DATA = 0xFF;

    /**
     * jsdp extension: the sender RDMA-wrote bytes into the receiver's ring (packetized flow control
     * only; an id the specification leaves unassigned). Layout: {@link RingMessages}.
     */
    public static final int RING_DATA = 0x80;
    /** jsdp extension: the receiver consumed bytes of its ring (packetized flow control only). */
    public static final int RING_ACK = 0x81;

    private MessageId() {
    }

    /**
     * Whether the id is defined by the specification (whether or not jsdp implements it).
     *
     * @param mid the id, 0–255
     * @return true for the ids listed in this class
     */
    public static boolean isDefined(int mid) {
        return mid <= SUSP_COMM_ACK || mid == SINK_AVAIL || mid == SRC_AVAIL || mid == DATA;
    }

    /**
     * The specification's name of an id.
     *
     * @param mid the id
     * @return e.g. {@code "DisConn"}, or {@code "0x42"} for an undefined id
     */
    public static String name(int mid) {
        return switch (mid) {
            case HELLO -> "Hello";
            case HELLO_ACK -> "HelloAck";
            case DISCONN -> "DisConn";
            case ABORT_CONN -> "AbortConn";
            case SEND_SM -> "SendSm";
            case RDMA_WR_COMPL -> "RdmaWrCompl";
            case RDMA_RD_COMPL -> "RdmaRdCompl";
            case MODE_CHANGE -> "ModeChange";
            case SRC_AVAIL_CANCEL -> "SrcAvailCancel";
            case SINK_AVAIL_CANCEL -> "SinkAvailCancel";
            case SINK_CANCEL_ACK -> "SinkCancelAck";
            case CH_RCV_BUF -> "ChRcvBuf";
            case CH_RCV_BUF_ACK -> "ChRcvBufAck";
            case SUSP_COMM -> "SuspComm";
            case SUSP_COMM_ACK -> "SuspCommAck";
            case SINK_AVAIL -> "SinkAvail";
            case SRC_AVAIL -> "SrcAvail";
            case DATA -> "Data";
            case RING_DATA -> "RingData";
            case RING_ACK -> "RingAck";
            default -> String.format("0x%02X", mid);
        };
    }
}
