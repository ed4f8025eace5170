package io.jsdp.flow.engine;

import java.util.Arrays;

/**
 * Why an SDP listener rejected a connect request, carried in the connection manager's reject as private
 * data (docs/protocol.md, "Reject reasons"): four bytes {@code 'J' 'S' 'D' 'P'}, then one byte of reason.
 * A listener that is there but cannot take the connection now says so, and the connecting side falls back
 * to TCP counting a busy peer, not a missing listener. Devices whose connection manager carries no private
 * data in a reject (DiSNI) deliver a bare reject: the connecting side then cannot tell the two apart.
 */
enum RejectReason {
    /** The listener's backlog is full. */
    BACKLOG(1, "its backlog is full"),
    /** The listening stack holds {@code jsdp.limit.connections} connections. */
    CONNECTIONS(2, "it is at its connection limit"),
    /** The listening stack has {@code jsdp.limit.handshakes} connections in set-up. */
    HANDSHAKES(3, "it is at its limit of connections in set-up"),
    /** The listening side could not have the connection's resources (device memory, a full /dev/shm). */
    RESOURCES(4, "it has no resources for another connection");

    private static final byte[] MAGIC = {'J', 'S', 'D', 'P'};
    private static final RejectReason[] ALL = values();

    private final byte code;
    private final String text;

    RejectReason(int code, String text) {
        this.code = (byte) code;
        this.text = text;
    }

    /** The reject's private data. */
    byte[] privateData() {
        byte[] b = Arrays.copyOf(MAGIC, MAGIC.length + 1);
        b[MAGIC.length] = code;
        return b;
    }

    /** What the connecting side says, after "the SDP listener refused: ". */
    String text() {
        return text;
    }

    /**
     * The reason a reject's private data names.
     *
     * @param data the private data, possibly empty (a bare reject)
     * @return the reason, or null when the data names none
     */
    static RejectReason of(byte[] data) {
        if (data == null || data.length < MAGIC.length + 1 || !Arrays.equals(data, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
            return null;
        }
        for (RejectReason r : ALL) {
            if (r.code == data[MAGIC.length]) {
                return r;
            }
        }
        return null;
    }

    static RejectReason of(ConnectionLimits.Cap cap) {
        return cap == ConnectionLimits.Cap.CONNECTIONS ? CONNECTIONS : HANDSHAKES;
    }
}
