package io.jsdp.flow.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Flyweight over the HelloAck message (BSDH + HelloAck Header, 196 bytes; {@code sdp-wire.md} C.4),
 * the passive side's in-band answer to {@link Hello}.
 *
 * <pre>
 *  0               1               2               3
 *  +---------------------------------------------------------------+
 *  |                       BSDH (16 bytes)                         |  0
 *  +---------------+---------------+---------------+---------------+
 *  |   majv_minv   |    ipv_cap    |     rsvd1     |ext_max_adverts| 16
 *  +---------------+---------------+---------------+---------------+
 *  |                            actrcvsz                           | 20
 *  +---------------------------------------------------------------+
 *  |          capabilities (jsdp; in the spec's reserved)          | 24
 *  +---------------------------------------------------------------+
 *  |         ring address (jsdp, packetized; 8 bytes)              | 28
 *  +---------------------------------------------------------------+
 *  |                   ring rkey (jsdp)                            | 36
 *  +---------------------------------------------------------------+
 *  |                   ring bytes (jsdp)                           | 40
 *  +---------------------------------------------------------------+
 *  |                    reserved (152 bytes)                       | 44
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Big-endian. {@code actrcvsz}: the size of each of the passive side's receive buffers, BSDH
 * included. {@code capabilities}: the scheme both sides use — the Hello's bit when the passive side asks for the
 * same scheme, else 0 (credit-based). The ring fields advertise the passive side's ring when the
 * answer is packetized, else 0.
 */
public final class HelloAck {
    /** Bytes of the whole message. */
    public static final int LENGTH = 196;
    /** Offset of {@code majv_minv}. */
    public static final int VERSION_OFFSET = 16;
    /** Offset of {@code ipv_cap}. */
    public static final int IP_VERSION_OFFSET = 17;
    /** Offset of {@code ext_max_adverts}. */
    public static final int MAX_ADVERTS_OFFSET = 19;
    /** Offset of {@code actrcvsz}. */
    public static final int ACTUAL_RCVSZ_OFFSET = 20;
    /** Offset of jsdp's ring address (packetized flow control; 0 otherwise). */
    public static final int RING_ADDRESS_OFFSET = 28;
    /** Offset of jsdp's ring rkey. */
    public static final int RING_RKEY_OFFSET = 36;
    /** Offset of jsdp's ring size in bytes. */
    public static final int RING_BYTES_OFFSET = 40;
    /** Offset of jsdp's capability bits. */
    public static final int CAPABILITIES_OFFSET = 24;

    private ByteBuffer buffer;
    private int offset;

    /**
     * Points the flyweight at a message.
     *
     * @param buffer the memory (a big-endian view is kept)
     * @param offset where the BSDH starts
     * @return this
     */
    public HelloAck wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer.order() == ByteOrder.BIG_ENDIAN ? buffer : buffer.duplicate().order(ByteOrder.BIG_ENDIAN);
        this.offset = offset;
        return this;
    }

    /**
     * Writes the HelloAck header (not the BSDH).
     *
     * @param maxAdverts outstanding zero-copy advertisements, at least 1
     * @param actualRcvSize the size of each local receive buffer, BSDH included
     * @param ipVersion 4 or 6
     * @param capabilities the capability bits both sides use
     * @return this
     */
    public HelloAck put(int maxAdverts, int actualRcvSize, int ipVersion, int capabilities) {
        for (int i = VERSION_OFFSET; i < LENGTH; i++) {
            buffer.put(offset + i, (byte) 0);
        }
        buffer.put(offset + VERSION_OFFSET, (byte) Hello.VERSION);
        buffer.put(offset + IP_VERSION_OFFSET, (byte) (ipVersion << 4));
        buffer.put(offset + MAX_ADVERTS_OFFSET, (byte) maxAdverts);
        buffer.putInt(offset + ACTUAL_RCVSZ_OFFSET, actualRcvSize);
        buffer.putInt(offset + CAPABILITIES_OFFSET, capabilities);
        return this;
    }

    /**
     * The major version.
     *
     * @return 0–15
     */
    public int majorVersion() {
        return (buffer.get(offset + VERSION_OFFSET) & 0xF0) >>> 4;
    }

    /**
     * The most outstanding zero-copy advertisements.
     *
     * @return 0–255
     */
    public int maxAdverts() {
        return buffer.get(offset + MAX_ADVERTS_OFFSET) & 0xFF;
    }

    /**
     * The size of the passive side's receive buffers.
     *
     * @return bytes, BSDH included, as an unsigned value
     */
    public long actualRcvSize() {
        return buffer.getInt(offset + ACTUAL_RCVSZ_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * The capability bits both sides use.
     *
     * @return the bits
     */
    public int capabilities() {
        return buffer.getInt(offset + CAPABILITIES_OFFSET);
    }

    /**
     * Writes the ring advertisement of packetized flow control (after {@code put}).
     *
     * @param address the ring's address as the peer names it in an RDMA WRITE
     * @param rkey its remote key
     * @param bytes its size
     * @return this
     */
    public HelloAck putRing(long address, int rkey, int bytes) {
        buffer.putLong(offset + RING_ADDRESS_OFFSET, address);
        buffer.putInt(offset + RING_RKEY_OFFSET, rkey);
        buffer.putInt(offset + RING_BYTES_OFFSET, bytes);
        return this;
    }

    /**
     * The advertised ring's address.
     *
     * @return the address
     */
    public long ringAddress() {
        return buffer.getLong(offset + RING_ADDRESS_OFFSET);
    }

    /**
     * The advertised ring's remote key.
     *
     * @return the rkey
     */
    public int ringRkey() {
        return buffer.getInt(offset + RING_RKEY_OFFSET);
    }

    /**
     * The advertised ring's size.
     *
     * @return bytes (unsigned)
     */
    public long ringBytes() {
        return buffer.getInt(offset + RING_BYTES_OFFSET) & 0xFFFF_FFFFL;
    }
}
