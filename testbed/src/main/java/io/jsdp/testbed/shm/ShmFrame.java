package io.jsdp.testbed.shm;

import java.nio.ByteBuffer;

/**
 * The control frames nodes exchange over their Unix-domain connections: fixed 16-byte records,
 * big-endian (the {@link ByteBuffer} default), several to a read.
 *
 * <pre>
 *  0               4               8                              16
 *  +---------------+---------------+-------------------------------+
 *  | type (int32)  | aux (int32)   | arg (int64)                   |
 *  +---------------+---------------+-------------------------------+
 *
 *  HELLO     aux = sender pid, arg = sender start stamp    first frame of the connecting side
 *  DOORBELL  aux = 0,          arg = doorbell id           wake the receiver's armed waiter
 * </pre>
 *
 * A pid fits {@code aux} because POSIX {@code pid_t} is a 32-bit signed integer. An unknown type,
 * a HELLO that is not first, or a DOORBELL before HELLO is a protocol violation: that connection is
 * closed (architecture decision 7) and nothing else is affected.
 */
final class ShmFrame {
    /** Bytes in a frame. */
    static final int LENGTH = 16;
    static final int TYPE_OFFSET = 0;
    static final int AUX_OFFSET = 4;
    static final int ARG_OFFSET = 8;

    /** Type: the connecting node names itself. */
    static final int HELLO = 1;
    /** Type: ring a doorbell of the receiving node. */
    static final int DOORBELL = 2;

    private ShmFrame() {
    }

    /** Appends a frame at {@code buf}'s position. */
    static void put(ByteBuffer buf, int type, int aux, long arg) {
        int at = buf.position();
        buf.putInt(at + TYPE_OFFSET, type).putInt(at + AUX_OFFSET, aux).putLong(at + ARG_OFFSET, arg);
        buf.position(at + LENGTH);
    }

    static int type(ByteBuffer buf, int at) {
        return buf.getInt(at + TYPE_OFFSET);
    }

    static int aux(ByteBuffer buf, int at) {
        return buf.getInt(at + AUX_OFFSET);
    }

    static long arg(ByteBuffer buf, int at) {
        return buf.getLong(at + ARG_OFFSET);
    }
}
