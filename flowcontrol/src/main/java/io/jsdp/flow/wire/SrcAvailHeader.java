package io.jsdp.flow.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over the SrcAvail extended header (SrcAH), which follows the BSDH of a SrcAvail message
 * (mid 0xFE; {@code ../shared/reference/sdp-wire.md} C.5, C.9). Big-endian.
 *
 * <pre>
 *  0               1               2               3
 *  +---------------------------------------------------------------+
 *  |                     len (bytes advertised)                    | 16
 *  +---------------------------------------------------------------+
 *  |                             rkey                              | 20
 *  +---------------------------------------------------------------+
 *  |                          vaddr (u64)                          | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 inline payload (combined mode)                | 32
 * </pre>
 *
 * {@code len} counts the whole advertised buffer, the inline bytes included; {@code vaddr} is the
 * device address of its first byte, so the sink reads {@code vaddr + consumed}. Offsets are from the
 * start of the message; the buffer given to {@link #wrap} must be big-endian (a {@link Bsdh}'s view).
 */
public final class SrcAvailHeader {
    /** Bytes of the extended header. */
    public static final int LENGTH = 16;
    /** Offset of {@code len} (u32) from the message start. */
    public static final int LEN_OFFSET = Bsdh.LENGTH;
    /** Offset of {@code rkey} (u32). */
    public static final int RKEY_OFFSET = Bsdh.LENGTH + 4;
    /** Offset of {@code vaddr} (u64). */
    public static final int VADDR_OFFSET = Bsdh.LENGTH + 8;
    /** Offset of the inline payload: BSDH plus SrcAH. */
    public static final int PAYLOAD_OFFSET = Bsdh.LENGTH + LENGTH;

    private ByteBuffer buffer;
    private int offset;

    /**
     * Points the flyweight at a message.
     *
     * @param buffer a big-endian buffer
     * @param offset where the message (its BSDH) starts
     * @return this
     */
    public SrcAvailHeader wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Writes the extended header.
     *
     * @param len bytes advertised, the inline ones included
     * @param rkey the remote key of the advertised buffer
     * @param vaddr the device address of its first byte
     * @return this
     */
    public SrcAvailHeader put(int len, int rkey, long vaddr) {
        buffer.putInt(offset + LEN_OFFSET, len);
        buffer.putInt(offset + RKEY_OFFSET, rkey);
        buffer.putLong(offset + VADDR_OFFSET, vaddr);
        return this;
    }

    /**
     * Bytes advertised.
     *
     * @return {@code len}, unsigned
     */
    public long len() {
        return buffer.getInt(offset + LEN_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * The remote key.
     *
     * @return {@code rkey}
     */
    public int rkey() {
        return buffer.getInt(offset + RKEY_OFFSET);
    }

    /**
     * The device address of the advertised buffer's first byte.
     *
     * @return {@code vaddr}
     */
    public long vaddr() {
        return buffer.getLong(offset + VADDR_OFFSET);
    }
}
