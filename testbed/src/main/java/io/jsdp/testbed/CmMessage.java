package io.jsdp.testbed;

import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.verbs.ConnectionParameters;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * The connection-manager messages {@link HostCm}s exchange as payloads of {@link ShmNode} messages of
 * kind {@link HostCm#MESSAGE_KIND}: a flyweight over a received payload, and encoders. Named after
 * the InfiniBand CM messages they stand for (IBA 12.6), big-endian.
 *
 * <pre>
 *  0       1                       4                               12                              20
 *  +-------+-----------------------+-------------------------------+-------------------------------+
 *  | type  | reserved (0)          | to (int64)                    | from (int64)                  |
 *  +-------+-----------------------+-------------------------------+-------------------------------+
 *  to:   the receiving id's handle at its node; 0 while the sender does not know it (REQ, and a REJ
 *        of the active side before the REP), then the receiver finds the id by (sender node, from)
 *  from: the sending id's handle at its node; 0 in a REJ that answers a REQ no id took
 *
 *  REQ  active to passive: connect request
 *   20 dstPort int32 | 24 srcPort int32 | 28 retry u8 | 29 rnrRetry u8 | 30 dstLen u8 | 31 srcLen u8
 *   32 dst address (dstLen: 4 or 16) | src address (srcLen: 4 or 16)
 *   | active endpoint ({@link XpEndpoint#BYTES}) | data length u16 (at most 56) | private data
 *  REP  passive to active: accepted
 *   20 passive endpoint ({@link XpEndpoint#BYTES}) | data length u16 (at most 196) | private data
 *  RTU  active to passive: the active queue pair is connected (ready to use); no body
 *  REJ  either way: refused, rejected, or given up
 *   20 status int32 | 24 data length u16 (at most 148) | private data
 *  DREQ either way: disconnect; no body
 * </pre>
 *
 * The destination address and port of a REQ are what the active side resolved; the source address
 * and port are its own. A REJ's status is the CM event status the receiver reports: {@code
 * -ECONNREFUSED} (no listener, backlog full, request dropped), 28 (consumer reject, or the active
 * queue pair could not connect) or {@code -ETIMEDOUT} (the active side gave up; the passive side
 * reports UNREACHABLE). Anything shorter or longer than its type says, or with an unknown type or a
 * bad length, is malformed; {@link #wrap} says what is wrong.
 *
 * <p>Threads: a flyweight belongs to one thread (the node thread that received the payload); the
 * encoders allocate, which is fine for connection setup.
 */
final class CmMessage {
    /** Type: connect request. */
    static final int REQ = 1;
    /** Type: connect reply (accepted). */
    static final int REP = 2;
    /** Type: ready to use (the active side established). */
    static final int RTU = 3;
    /** Type: reject. */
    static final int REJ = 4;
    /** Type: disconnect request. */
    static final int DREQ = 5;

    static final int TYPE_OFFSET = 0;
    static final int TO_OFFSET = 4;
    static final int FROM_OFFSET = 12;
    static final int HEADER_BYTES = 20;

    static final int REQ_DST_PORT_OFFSET = 20;
    static final int REQ_SRC_PORT_OFFSET = 24;
    static final int REQ_RETRY_OFFSET = 28;
    static final int REQ_RNR_RETRY_OFFSET = 29;
    static final int REQ_DST_LEN_OFFSET = 30;
    static final int REQ_SRC_LEN_OFFSET = 31;
    static final int REQ_ADDRESSES_OFFSET = 32;
    static final int REP_ENDPOINT_OFFSET = 20;
    static final int REJ_STATUS_OFFSET = 20;
    static final int REJ_DATA_LENGTH_OFFSET = 24;

    private ByteBuffer buffer;
    private int type;
    private int endpointOffset;
    private int dataLengthOffset;
    private InetAddress dst;
    private InetAddress src;

    /**
     * Points the flyweight at a received payload (position 0) and checks it.
     *
     * @param payload the message
     * @return null when well-formed, else what is malformed
     */
    String wrap(ByteBuffer payload) {
        this.buffer = payload;
        this.dst = null;
        this.src = null;
        int n = payload.limit();
        if (n < HEADER_BYTES) {
            return "CM message of " + n + " bytes, shorter than its header";
        }
        type = payload.get(TYPE_OFFSET);
        int maxData;
        switch (type) {
            case REQ: {
                if (n < REQ_ADDRESSES_OFFSET) {
                    return "REQ of " + n + " bytes";
                }
                int dstLen = payload.get(REQ_DST_LEN_OFFSET);
                int srcLen = payload.get(REQ_SRC_LEN_OFFSET);
                if (!addressLength(dstLen) || !addressLength(srcLen)) {
                    return "REQ with address lengths " + dstLen + " and " + srcLen;
                }
                int retry = payload.get(REQ_RETRY_OFFSET);
                int rnrRetry = payload.get(REQ_RNR_RETRY_OFFSET);
                if (retry < 0 || retry > 7 || rnrRetry < 0 || rnrRetry > 7) {
                    return "REQ with retry counts " + retry + " and " + rnrRetry;
                }
                endpointOffset = REQ_ADDRESSES_OFFSET + dstLen + srcLen;
                dataLengthOffset = endpointOffset + XpEndpoint.BYTES;
                maxData = ConnectionParameters.MAX_CONNECT_PRIVATE_DATA;
                if (n >= dataLengthOffset) {
                    dst = address(REQ_ADDRESSES_OFFSET, dstLen);
                    src = address(REQ_ADDRESSES_OFFSET + dstLen, srcLen);
                }
                break;
            }
            case REP:
                endpointOffset = REP_ENDPOINT_OFFSET;
                dataLengthOffset = endpointOffset + XpEndpoint.BYTES;
                maxData = ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA;
                break;
            case REJ:
                dataLengthOffset = REJ_DATA_LENGTH_OFFSET;
                maxData = ConnectionParameters.MAX_REJECT_PRIVATE_DATA;
                break;
            case RTU:
            case DREQ:
                return n == HEADER_BYTES ? null : "CM message type " + type + " of " + n + " bytes";
            default:
                return "unknown CM message type " + type;
        }
        if (n < dataLengthOffset + 2) {
            return "CM message type " + type + " of " + n + " bytes";
        }
        int dataLength = payload.getShort(dataLengthOffset) & 0xffff;
        if (dataLength > maxData || n != dataLengthOffset + 2 + dataLength) {
            return "CM message type " + type + " of " + n + " bytes with " + dataLength + " bytes of private data (at most "
                + maxData + ")";
        }
        return null;
    }

    private static boolean addressLength(int n) {
        return n == 4 || n == 16;
    }

    private InetAddress address(int offset, int length) {
        byte[] a = new byte[length];
        buffer.get(offset, a);
        try {
            return InetAddress.getByAddress(a);
        } catch (UnknownHostException cannotHappen) {
            throw new IllegalStateException(cannotHappen); // lengths were checked
        }
    }

    int type() {
        return type;
    }

    long to() {
        return buffer.getLong(TO_OFFSET);
    }

    long from() {
        return buffer.getLong(FROM_OFFSET);
    }

    /** REQ: where the active side connects to. */
    InetSocketAddress destination() {
        return new InetSocketAddress(dst, buffer.getInt(REQ_DST_PORT_OFFSET));
    }

    /** REQ: the active side's own address. */
    InetSocketAddress source() {
        return new InetSocketAddress(src, buffer.getInt(REQ_SRC_PORT_OFFSET));
    }

    /** REQ: the active side's transport retry count. */
    int retryCount() {
        return buffer.get(REQ_RETRY_OFFSET);
    }

    /** REQ: the active side's RNR retry count. */
    int rnrRetryCount() {
        return buffer.get(REQ_RNR_RETRY_OFFSET);
    }

    /** REQ, REP: the sender's queue-pair endpoint. */
    XpEndpoint endpoint() {
        return XpEndpoint.get(buffer.duplicate().position(endpointOffset));
    }

    /** REJ: the status the receiver reports. */
    int status() {
        return buffer.getInt(REJ_STATUS_OFFSET);
    }

    /** REQ, REP, REJ: the private data. */
    byte[] privateData() {
        byte[] d = new byte[buffer.getShort(dataLengthOffset) & 0xffff];
        buffer.get(dataLengthOffset + 2, d);
        return d;
    }

    // ------------------------------------------------------------------ encoders

    private static ByteBuffer header(int bodyBytes, int type, long to, long from) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + bodyBytes);
        b.put((byte) type).put((byte) 0).putShort((short) 0).putLong(to).putLong(from);
        return b;
    }

    private static byte[] data(byte[] d) {
        return d == null ? new byte[0] : d;
    }

    /** A REQ from active id {@code from}. */
    static ByteBuffer req(long from, InetSocketAddress destination, InetSocketAddress source, ConnectionParameters p,
            XpEndpoint endpoint, byte[] privateData) {
        byte[] dstAddr = destination.getAddress().getAddress();
        byte[] srcAddr = source.getAddress().getAddress();
        byte[] d = data(privateData);
        ByteBuffer b = header(12 + dstAddr.length + srcAddr.length + XpEndpoint.BYTES + 2 + d.length, REQ, 0, from);
        b.putInt(destination.getPort()).putInt(source.getPort()).put((byte) p.retryCount()).put((byte) p.rnrRetryCount())
            .put((byte) dstAddr.length).put((byte) srcAddr.length).put(dstAddr).put(srcAddr);
        endpoint.put(b);
        b.putShort((short) d.length).put(d);
        return b.flip();
    }

    /** A REP from passive id {@code from} to active id {@code to}. */
    static ByteBuffer rep(long to, long from, XpEndpoint endpoint, byte[] privateData) {
        byte[] d = data(privateData);
        ByteBuffer b = header(XpEndpoint.BYTES + 2 + d.length, REP, to, from);
        endpoint.put(b);
        b.putShort((short) d.length).put(d);
        return b.flip();
    }

    /** An RTU from active id {@code from} to passive id {@code to}. */
    static ByteBuffer rtu(long to, long from) {
        return header(0, RTU, to, from).flip();
    }

    /** A REJ carrying the status the receiver reports. */
    static ByteBuffer rej(long to, long from, int status, byte[] privateData) {
        byte[] d = data(privateData);
        ByteBuffer b = header(6 + d.length, REJ, to, from);
        b.putInt(status).putShort((short) d.length).put(d);
        return b.flip();
    }

    /** A DREQ. */
    static ByteBuffer dreq(long to, long from) {
        return header(0, DREQ, to, from).flip();
    }
}
