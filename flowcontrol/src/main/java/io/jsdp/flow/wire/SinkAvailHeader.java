package io.jsdp.flow.wire;

import java.nio.ByteBuffer;

/**
 * Flyweight over the SinkAvail extended header (SinkAH), which follows the BSDH of a SinkAvail message
 * (mid 0xFD; {@code ../shared/reference/sdp-wire.md} C.9, {@code docs/protocol.md} section 9). Big-endian.
 *
 * <pre>
 *  0               1               2               3
 *  +---------------------------------------------------------------+
 *  |                     size (bytes advertised)                   | 16
 *  +---------------------------------------------------------------+
 *  |                      rkey (REMOTE_WRITE)                      | 20
 *  +---------------------------------------------------------------+
 *  |                           addr (u64)                          | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                           non_disc                            | 32
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * {@code addr} is the device address of the sink buffer's first byte; {@code non_disc} counts the
 * stream messages (Data with payload, SrcAvail) the sink had received when it sent the advertisement,
 * so the source can tell one that crossed its own data (stale). Offsets are from the message start.
 */
public final class SinkAvailHeader {
    /** Bytes of the extended header. */
    public static final int LENGTH = 20;
    /** Offset of {@code size} (u32) from the message start. */
    public static final int SIZE_OFFSET = Bsdh.LENGTH;
    /** Offset of {@code rkey} (u32). */
    public static final int RKEY_OFFSET = Bsdh.LENGTH + 4;
    /** Offset of {@code addr} (u64). */
    public static final int ADDR_OFFSET = Bsdh.LENGTH + 8;
    /** Offset of {@code non_disc} (u32). */
    public static final int NON_DISC_OFFSET = Bsdh.LENGTH + 16;
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
    public SinkAvailHeader wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Writes the extended header.
     *
     * @param size bytes advertised
     * @param rkey the remote key of the sink buffer
     * @param addr the device address of its first byte
     * @param nonDisc stream messages received so far
     * @return this
     */
    public SinkAvailHeader put(int size, int rkey, long addr, int nonDisc) {
        buffer.putInt(offset + SIZE_OFFSET, size);
        buffer.putInt(offset + RKEY_OFFSET, rkey);
        buffer.putLong(offset + ADDR_OFFSET, addr);
        buffer.putInt(offset + NON_DISC_OFFSET, nonDisc);
        return this;
    }

    /**
     * Bytes advertised.
     *
     * @return {@code size}, unsigned
     */
    public long size() {
        return buffer.getInt(offset + SIZE_OFFSET) & 0xFFFF_FFFFL;
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
     * The device address of the sink buffer's first byte.
     *
     * @return {@code addr}
     */
    public long addr() {
        return buffer.getLong(offset + ADDR_OFFSET);
    }

    /**
     * Stream messages the sink had received.
     *
     * @return {@code non_disc}
     */
    public int nonDisc() {
        return buffer.getInt(offset + NON_DISC_OFFSET);
    }
}
