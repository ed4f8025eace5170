package io.jsdp.flow.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over the one-field extended header of RdmaRdCompl (RRCH, mid 0x06) and RdmaWrCompl
 * (RWCH, mid 0x05) ({@code ../shared/reference/sdp-wire.md} C.5). Big-endian.
 *
 * <pre>
 *  0               1               2               3
 *  +---------------------------------------------------------------+
 *  |                             size                              | 16
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * RdmaRdCompl: bytes the sink RDMA-read of the oldest SrcAvail since its last report. RdmaWrCompl:
 * bytes the source RDMA-wrote into the oldest SinkAvail.
 */
public final class RdmaComplHeader {
    /** Bytes of the extended header. */
    public static final int LENGTH = 4;
    /** Offset of {@code size} (u32) from the message start. */
    public static final int SIZE_OFFSET = Bsdh.LENGTH;
    /** Length of the whole message. */
    public static final int MESSAGE_LENGTH = Bsdh.LENGTH + LENGTH;

    private ByteBuffer buffer;
    private int offset;

    /**
     * Points the flyweight at a message.
     *
     * @param buffer a big-endian buffer
     * @param offset where the message (its BSDH) starts
     * @return this
     */
    public RdmaComplHeader wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Writes {@code size}.
     *
     * @param size the byte count
     * @return this
     */
    public RdmaComplHeader put(int size) {
        buffer.putInt(offset + SIZE_OFFSET, size);
        return this;
    }

    /**
     * The byte count.
     *
     * @return {@code size}, unsigned
     */
    public long size() {
        return buffer.getInt(offset + SIZE_OFFSET) & 0xFFFF_FFFFL;
    }
}
