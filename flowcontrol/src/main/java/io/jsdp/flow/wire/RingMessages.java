package io.jsdp.flow.wire;

/**
 * Layouts of jsdp's two packetized-flow-control messages (extension ids, sent only on connections
 * that negotiated packetized flow control; {@code docs/protocol.md} section 5b). Both are big-endian
 * and follow the BSDH; the engine reads and writes them through the connection's memory buffer.
 *
 * <pre>
 * RingData (mid 0x80, 28 bytes)                 RingAck (mid 0x81, 20 bytes)
 *  +--------------------------------+            +--------------------------------+
 *  |        BSDH (16 bytes)         |  0         |        BSDH (16 bytes)         |  0
 *  +--------------------------------+            +--------------------------------+
 *  |  offset: where the bytes start |  16        | consumed: bytes of the sender's|  16
 *  |  in the receiver's ring        |            | ring read, cumulative (low 32) |
 *  +--------------------------------+            +--------------------------------+
 *  |  length: bytes written (they   |  20
 *  |  may wrap round the ring end)  |
 *  +--------------------------------+
 *  | consumed: as in RingAck, for   |  24
 *  | the reverse direction          |
 *  +--------------------------------+
 *  | the run itself, when carried   |  28 (optional: len = 28 + length)
 *  | inline instead of RDMA-written |
 *  +--------------------------------+
 * </pre>
 */
public final class RingMessages {
    /** Bytes of a RingData message without an inline run. */
    public static final int RING_DATA_LENGTH = 28;
    /** RingData: offset of the ring offset. */
    public static final int RING_DATA_OFFSET_OFFSET = 16;
    /** RingData: offset of the byte count. */
    public static final int RING_DATA_LENGTH_OFFSET = 20;
    /** RingData: offset of the piggybacked consumed count. */
    public static final int RING_DATA_CONSUMED_OFFSET = 24;
    /** Bytes of a RingAck message. */
    public static final int RING_ACK_LENGTH = 20;
    /** RingAck: offset of the consumed count. */
    public static final int RING_ACK_CONSUMED_OFFSET = 16;

    private RingMessages() {
    }
}
