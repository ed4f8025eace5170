package io.jsdp.testbed.shm;

import java.nio.ByteBuffer;

/**
 * The control frames nodes exchange over their Unix-domain connections: 16-byte records,
 * big-endian (the {@link ByteBuffer} default), several to a read; a MESSAGE frame is followed by its
 * payload.
 *
 * <pre>
 *  0               4               8                              16
 *  +---------------+---------------+-------------------------------+
 *  | type (int32)  | aux (int32)   | arg (int64)                   |
 *  +---------------+---------------+-------------------------------+
 *
 *  HELLO     aux = sender pid, arg = sender start stamp    first frame of the connecting side
 *  DOORBELL  aux = 0,          arg = doorbell id           wake the receiver's armed waiter
 *  MESSAGE   aux = kind,       arg = payload bytes n       followed by n payload bytes, for the
 *                                                          receiver's handler of that kind
 * </pre>
 *
 * A pid fits {@code aux} because POSIX {@code pid_t} is a 32-bit signed integer. Message kinds are
 * 0..{@value ShmNode#MESSAGE_KINDS}-1; in use: 1, the host connection manager ({@code HostCm}). A
 * payload is 0..{@value ShmNode#MAX_MESSAGE_BYTES} bytes. An unknown type, a HELLO that is not first,
 * a DOORBELL or MESSAGE before HELLO, a kind out of range or a payload length out of range is a
 * protocol violation: that connection is closed (architecture decision 7) and nothing else is
 * affected. A MESSAGE of a kind nobody handles is dropped (traced), not a violation.
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
    /** Type: a message with a payload for the receiver's handler of its kind. */
    static final int MESSAGE = 3;
    /**
     * Type: the first frame of a direct-doorbell connection (aux the connecting node's pid, arg its
     * start stamp), followed by {@link #DIRECT_BODY} bytes: the receiving node's queue pair (i32) and
     * the connecting node's (i32). The connection then leaves the node thread: it carries one byte
     * per ring between the two queue pairs' waiting threads.
     */
    static final int DIRECT = 4;
    /** Bytes after a {@link #DIRECT} frame's header. */
    static final int DIRECT_BODY = 8;

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
