package io.jsdp.verbs;

import java.util.Arrays;

/**
 * A connection-manager event ({@code struct rdma_cm_event}).
 *
 * @param type what happened
 * @param id the id the event is about; for {@link CmEventType#CONNECT_REQUEST} the new passive id
 * @param listenId the listener, for {@link CmEventType#CONNECT_REQUEST}; otherwise null
 * @param status 0, or a negative {@link Errno} code saying why (e.g. {@code -ETIMEDOUT} for
 *     UNREACHABLE, {@code -ECONNREFUSED} for REJECTED without a listener), or the positive reject
 *     reason {@link #REJECT_CONSUMER} when the peer called {@link CmId#reject}
 * @param privateData the peer's private data (connect, accept or reject), possibly empty
 */
public record CmEvent(CmEventType type, CmId id, CmId listenId, int status, byte[] privateData) {
    /** Status of a REJECTED event caused by the peer's {@link CmId#reject} (IB CM reject reason 28). */
    public static final int REJECT_CONSUMER = 28;

    /**
     * Creates an event; the private data is copied.
     *
     * @param type what happened
     * @param id the id the event is about
     * @param listenId the listener for connect requests, else null
     * @param status 0 or a status code
     * @param privateData the peer's private data, or null for none
     */
    public CmEvent {
        privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /**
     * The peer's private data.
     *
     * @return a copy of the bytes
     */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CmEvent e && e.type == type && e.id == id && e.listenId == listenId
            && e.status == status && Arrays.equals(e.privateData, privateData);
    }

    @Override
    public int hashCode() {
        return (type.hashCode() * 31 + System.identityHashCode(id)) * 31 + status;
    }

    @Override
    public String toString() {
        return "CmEvent{" + type + ", id=" + id + (listenId != null ? ", listen=" + listenId : "")
            + ", status=" + status + ", privateData=" + privateData.length + "B}";
    }
}
