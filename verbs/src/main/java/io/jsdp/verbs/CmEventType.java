package io.jsdp.verbs;

/** Connection-manager event types; ordinals equal librdmacm's {@code enum rdma_cm_event_type}. */
public enum CmEventType {
    /** {@link CmId#resolveAddress} succeeded. */
    ADDR_RESOLVED,
    /** Address resolution failed or timed out (terminal). */
    ADDR_ERROR,
    /** {@link CmId#resolveRoute} succeeded. */
    ROUTE_RESOLVED,
    /** Route resolution failed (terminal). */
    ROUTE_ERROR,
    /** A peer connects to a listener; the event's id is the new passive-side id. */
    CONNECT_REQUEST,
    /** A connect answered for an id without a queue pair (unused by this port). */
    CONNECT_RESPONSE,
    /** Establishing failed after the peer answered (terminal). */
    CONNECT_ERROR,
    /** The peer did not answer in time (terminal). */
    UNREACHABLE,
    /** The peer refused: no listener, or the listener rejected (terminal). */
    REJECTED,
    /** The connection is up. */
    ESTABLISHED,
    /** The connection is down: either side disconnected or the peer is gone (terminal). */
    DISCONNECTED,
    /** The device went away (terminal). */
    DEVICE_REMOVAL,
    /** Multicast join succeeded (unused). */
    MULTICAST_JOIN,
    /** Multicast error (unused). */
    MULTICAST_ERROR,
    /** The local address changed. */
    ADDR_CHANGE,
    /** The id left time-wait. */
    TIMEWAIT_EXIT;

    /**
     * Whether the event ends the id's connection attempt or connection.
     *
     * @return true for errors, rejections and disconnection
     */
    public boolean isTerminal() {
        switch (this) {
            case ADDR_ERROR:
            case ROUTE_ERROR:
            case CONNECT_ERROR:
            case UNREACHABLE:
            case REJECTED:
            case DISCONNECTED:
            case DEVICE_REMOVAL:
                return true;
            default:
                return false;
        }
    }
}
