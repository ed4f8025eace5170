package io.jsdp.flow.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Flyweight over the Base Sockets Direct Header that starts every SDP message (IBTA Annex A4;
 * {@code ../shared/reference/sdp-wire.md} C.1). All fields are big-endian.
 *
 * <pre>
 *  0               1               2               3
 *  +---------------+---------------+-------------------------------+
 *  |      mid      |     flags     |             bufs              |  0
 *  +---------------+---------------+-------------------------------+
 *  |                              len                              |  4
 *  +---------------------------------------------------------------+
 *  |                             mseq                              |  8
 *  +---------------------------------------------------------------+
 *  |                           mseq_ack                            | 12
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * {@code bufs}: receive buffers the sender has posted; {@code len}: the whole message including
 * this header; {@code mseq}: this message's sequence number (Hello/HelloAck 0, then 1, 2, …);
 * {@code mseq_ack}: the last {@code mseq} the sender received. Sequence numbers are unsigned 32-bit
 * on the wire; jsdp keeps them as {@code int} and compares them with wrap-around arithmetic.
 *
 * <p>{@link #wrap} a buffer once, then move with {@link #at}: reading and writing allocate nothing.
 */
public final class Bsdh {
    /** Bytes of the header. */
    public static final int LENGTH = 16;
    /** Offset of {@code mid} (u8). */
    public static final int MID_OFFSET = 0;
    /** Offset of {@code flags} (u8). */
    public static final int FLAGS_OFFSET = 1;
    /** Offset of {@code bufs} (u16). */
    public static final int BUFS_OFFSET = 2;
    /** Offset of {@code len} (u32). */
    public static final int LEN_OFFSET = 4;
    /** Offset of {@code mseq} (u32). */
    public static final int MSEQ_OFFSET = 8;
    /** Offset of {@code mseq_ack} (u32). */
    public static final int MSEQ_ACK_OFFSET = 12;
    /** {@code flags} bit 0: the last payload byte is out-of-band data. */
    public static final int FLAG_OOB_PRES = 0x01;
    /** {@code flags} bit 1: out-of-band data is pending. */
    public static final int FLAG_OOB_PEND = 0x02;
    /** {@code flags} bit 2: the sink asks for pipelined mode (RdmaRdCompl only). */
    public static final int FLAG_REQ_PIPE = 0x04;
    /** The largest {@code bufs} value. */
    public static final int MAX_BUFS = 0xFFFF;

    private ByteBuffer buffer;
    private int offset;

    /**
     * Points the flyweight at a buffer; the flyweight keeps a big-endian view of it (one allocation
     * per wrap, so wrap once and use {@link #at}).
     *
     * @param buffer the memory holding messages
     * @param offset where the header starts
     * @return this
     */
    public Bsdh wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer.duplicate().order(ByteOrder.BIG_ENDIAN);
        this.offset = offset;
        return this;
    }

    /**
     * Moves to another header in the wrapped buffer.
     *
     * @param offset where the header starts
     * @return this
     */
    public Bsdh at(int offset) {
        this.offset = offset;
        return this;
    }

    /**
     * The wrapped buffer (big-endian view).
     *
     * @return the buffer
     */
    public ByteBuffer buffer() {
        return buffer;
    }

    /**
     * Where the current header starts.
     *
     * @return the offset
     */
    public int offset() {
        return offset;
    }

    /**
     * Writes a whole header.
     *
     * @param mid the message id
     * @param flags the flags
     * @param bufs posted receive buffers, 0–65535
     * @param len the whole message length
     * @param mseq this message's sequence number
     * @param mseqAck the last sequence number received
     * @return this
     */
    public Bsdh put(int mid, int flags, int bufs, int len, int mseq, int mseqAck) {
        buffer.put(offset + MID_OFFSET, (byte) mid);
        buffer.put(offset + FLAGS_OFFSET, (byte) flags);
        buffer.putShort(offset + BUFS_OFFSET, (short) bufs);
        buffer.putInt(offset + LEN_OFFSET, len);
        buffer.putInt(offset + MSEQ_OFFSET, mseq);
        buffer.putInt(offset + MSEQ_ACK_OFFSET, mseqAck);
        return this;
    }

    /**
     * The message id.
     *
     * @return 0–255
     */
    public int mid() {
        return buffer.get(offset + MID_OFFSET) & 0xFF;
    }

    /**
     * The flags.
     *
     * @return 0–255
     */
    public int flags() {
        return buffer.get(offset + FLAGS_OFFSET) & 0xFF;
    }

    /**
     * Receive buffers the sender has posted.
     *
     * @return 0–65535
     */
    public int bufs() {
        return buffer.getShort(offset + BUFS_OFFSET) & 0xFFFF;
    }

    /**
     * The whole message length, as an unsigned value.
     *
     * @return 0–2^32-1
     */
    public long len() {
        return buffer.getInt(offset + LEN_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * The message's sequence number.
     *
     * @return the 32 bits as an int
     */
    public int mseq() {
        return buffer.getInt(offset + MSEQ_OFFSET);
    }

    /**
     * The last sequence number the sender received.
     *
     * @return the 32 bits as an int
     */
    public int mseqAck() {
        return buffer.getInt(offset + MSEQ_ACK_OFFSET);
    }
}
