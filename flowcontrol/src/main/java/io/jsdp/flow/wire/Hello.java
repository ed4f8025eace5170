package io.jsdp.flow.wire;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Flyweight over the Hello message (BSDH + Hello Header, 92 bytes; {@code sdp-wire.md} C.3), which
 * jsdp sends in-band as the active side's first SEND (C.7), not in the CM request.
 *
 * <pre>
 *  0               1               2               3
 *  +---------------------------------------------------------------+
 *  |                       BSDH (16 bytes)                         |  0
 *  +---------------+---------------+---------------+---------------+
 *  |   majv_minv   |    ipv_cap    |     rsvd1     |  max_adverts  | 16
 *  +---------------+---------------+---------------+---------------+
 *  |                          desremrcvsz                          | 20
 *  +---------------------------------------------------------------+
 *  |                           localrcvsz                          | 24
 *  +-------------------------------+-------------------------------+
 *  |             port              |             rsvd2             | 28
 *  +-------------------------------+-------------------------------+
 *  |                     src_addr (16 bytes)                       | 32
 *  +---------------------------------------------------------------+
 *  |                     dst_addr (16 bytes)                       | 48
 *  +---------------------------------------------------------------+
 *  |          capabilities (jsdp; in the spec's rsvd3)             | 64
 *  +---------------------------------------------------------------+
 *  |         ring address (jsdp, packetized; 8 bytes)              | 68
 *  +---------------------------------------------------------------+
 *  |                   ring rkey (jsdp)                            | 76
 *  +---------------------------------------------------------------+
 *  |                   ring bytes (jsdp)                           | 80
 *  +---------------------------------------------------------------+
 *  |                      rsvd3 (8 bytes)                          | 84
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * Big-endian. {@code majv_minv}: major version in bits 7–4; {@code ipv_cap}: IP version in bits 7–4
 * (4 or 6). {@code localrcvsz}: the size of each of the sender's receive buffers, BSDH included — the
 * largest message the peer may send. IPv4 addresses take the last 4 bytes of their 16.
 * {@code capabilities}: the flow-control scheme the active side asks for
 * ({@link io.jsdp.flow.FlowControlScheme}: 0 credit-based, 1 packetized, 2 NIC-assisted; a peer that
 * does not know them sends 0 and gets the specification's behaviour). The ring fields advertise the
 * active side's receive ring when it asks for packetized flow control, else 0.
 */
public final class Hello {
    /** Bytes of the whole message. */
    public static final int LENGTH = 92;
    /** The version jsdp speaks: SDP 1.1 (the IBTA specification's numbering). */
    public static final int VERSION = 0x11;
    /** Offset of {@code majv_minv}. */
    public static final int VERSION_OFFSET = 16;
    /** Offset of {@code ipv_cap}. */
    public static final int IP_VERSION_OFFSET = 17;
    /** Offset of {@code max_adverts}. */
    public static final int MAX_ADVERTS_OFFSET = 19;
    /** Offset of {@code desremrcvsz}. */
    public static final int DESIRED_REMOTE_RCVSZ_OFFSET = 20;
    /** Offset of {@code localrcvsz}. */
    public static final int LOCAL_RCVSZ_OFFSET = 24;
    /** Offset of {@code port}. */
    public static final int PORT_OFFSET = 28;
    /** Offset of {@code src_addr}. */
    public static final int SRC_ADDR_OFFSET = 32;
    /** Offset of {@code dst_addr}. */
    public static final int DST_ADDR_OFFSET = 48;
    /** Offset of jsdp's ring address (packetized flow control; 0 otherwise). */
    public static final int RING_ADDRESS_OFFSET = 68;
    /** Offset of jsdp's ring rkey. */
    public static final int RING_RKEY_OFFSET = 76;
    /** Offset of jsdp's ring size in bytes. */
    public static final int RING_BYTES_OFFSET = 80;
    /** Offset of jsdp's capability bits. */
    public static final int CAPABILITIES_OFFSET = 64;

    private ByteBuffer buffer;
    private int offset;

    /**
     * Points the flyweight at a message.
     *
     * @param buffer the memory (a big-endian view is kept)
     * @param offset where the BSDH starts
     * @return this
     */
    public Hello wrap(ByteBuffer buffer, int offset) {
        this.buffer = buffer.order() == ByteOrder.BIG_ENDIAN ? buffer : buffer.duplicate().order(ByteOrder.BIG_ENDIAN);
        this.offset = offset;
        return this;
    }

    /**
     * Writes the Hello header (not the BSDH, which the sender writes with {@link Bsdh#put}).
     *
     * @param maxAdverts outstanding zero-copy advertisements, at least 1
     * @param localRcvSize the size of each local receive buffer, BSDH included
     * @param source the local address
     * @param destination the peer's address
     * @param capabilities jsdp capability bits
     * @return this
     */
    public Hello put(int maxAdverts, int localRcvSize, InetSocketAddress source, InetSocketAddress destination,
                     int capabilities) {
        for (int i = VERSION_OFFSET; i < LENGTH; i++) {
            buffer.put(offset + i, (byte) 0);
        }
        buffer.put(offset + VERSION_OFFSET, (byte) VERSION);
        boolean v6 = source != null && source.getAddress() instanceof Inet6Address;
        buffer.put(offset + IP_VERSION_OFFSET, (byte) (v6 ? 0x60 : 0x40));
        buffer.put(offset + MAX_ADVERTS_OFFSET, (byte) maxAdverts);
        buffer.putInt(offset + DESIRED_REMOTE_RCVSZ_OFFSET, localRcvSize);
        buffer.putInt(offset + LOCAL_RCVSZ_OFFSET, localRcvSize);
        buffer.putShort(offset + PORT_OFFSET, (short) (source == null ? 0 : source.getPort()));
        putAddress(buffer, offset + SRC_ADDR_OFFSET, source);
        putAddress(buffer, offset + DST_ADDR_OFFSET, destination);
        buffer.putInt(offset + CAPABILITIES_OFFSET, capabilities);
        return this;
    }

    static void putAddress(ByteBuffer buffer, int at, InetSocketAddress address) {
        if (address == null) {
            return;
        }
        byte[] raw = address.getAddress().getAddress();
        int start = at + 16 - raw.length;
        for (int i = 0; i < raw.length; i++) {
            buffer.put(start + i, raw[i]);
        }
    }

    /**
     * The major version (bits 7–4 of {@code majv_minv}).
     *
     * @return 0–15
     */
    public int majorVersion() {
        return (buffer.get(offset + VERSION_OFFSET) & 0xF0) >>> 4;
    }

    /**
     * The IP version (bits 7–4 of {@code ipv_cap}).
     *
     * @return 4 or 6 from a good peer
     */
    public int ipVersion() {
        return (buffer.get(offset + IP_VERSION_OFFSET) & 0xF0) >>> 4;
    }

    /**
     * The most outstanding zero-copy advertisements.
     *
     * @return 0–255; 0 is a protocol violation
     */
    public int maxAdverts() {
        return buffer.get(offset + MAX_ADVERTS_OFFSET) & 0xFF;
    }

    /**
     * The size of the sender's receive buffers.
     *
     * @return bytes, BSDH included, as an unsigned value
     */
    public long localRcvSize() {
        return buffer.getInt(offset + LOCAL_RCVSZ_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * The sender's port.
     *
     * @return 0–65535
     */
    public int port() {
        return buffer.getShort(offset + PORT_OFFSET) & 0xFFFF;
    }

    /**
     * The sender's address.
     *
     * @return the address (IPv4 when the first 12 bytes are zero)
     */
    public InetAddress sourceAddress() {
        return address(buffer, offset + SRC_ADDR_OFFSET);
    }

    static InetAddress address(ByteBuffer buffer, int at) {
        byte[] raw = new byte[16];
        boolean v4 = true;
        for (int i = 0; i < 16; i++) {
            raw[i] = buffer.get(at + i);
            if (i < 12 && raw[i] != 0) {
                v4 = false;
            }
        }
        try {
            return v4 ? Inet4Address.getByAddress(Arrays.copyOfRange(raw, 12, 16)) : InetAddress.getByAddress(raw);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("16 or 4 bytes are always an address", e);
        }
    }

    /**
     * jsdp's capability bits.
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
    public Hello putRing(long address, int rkey, int bytes) {
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
