package io.jsdp.verbs;

/**
 * Queue-pair states ({@code enum ibv_qp_state}). A reliable-connected queue pair moves
 * RESET → INIT → RTR → RTS and from any state to ERROR or back to RESET; the connection manager
 * makes the INIT → RTR → RTS moves when a connection is established.
 */
public enum QpState {
    /** Just created or reset: nothing may be posted. */
    RESET,
    /** Initialised: receives may be posted, sends not yet. */
    INIT,
    /** Ready to receive: connected to a peer, sends not yet allowed. */
    RTR,
    /** Ready to send: fully operational. */
    RTS,
    /** Send-queue drain (unused by SDP). */
    SQD,
    /** Send-queue error (unused by SDP). */
    SQE,
    /** Error: every outstanding and every later request completes with {@link WcStatus#WR_FLUSH_ERR}. */
    ERROR
}
