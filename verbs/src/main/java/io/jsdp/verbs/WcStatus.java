package io.jsdp.verbs;

/** Work-completion status ({@code enum ibv_wc_status}); ordinals equal the verbs codes. */
public enum WcStatus {
    /** The request completed. */
    SUCCESS,
    /** Local length error: a receive was too small for the incoming message. */
    LOC_LEN_ERR,
    /** Local queue-pair operation error: a malformed work request. */
    LOC_QP_OP_ERR,
    /** Local EE context error (reliable datagram only). */
    LOC_EEC_OP_ERR,
    /** Local protection error: a bad lkey, an SGE outside its region, or a missing LOCAL_WRITE. */
    LOC_PROT_ERR,
    /** The queue pair was in the error state: the request was flushed. */
    WR_FLUSH_ERR,
    /** Memory-window bind error. */
    MW_BIND_ERR,
    /** Bad response from the peer. */
    BAD_RESP_ERR,
    /** Local access error. */
    LOC_ACCESS_ERR,
    /** Remote invalid request: the peer's receive was too small, or the request was invalid there. */
    REM_INV_REQ_ERR,
    /** Remote access error: a bad rkey, range or permission at the peer. */
    REM_ACCESS_ERR,
    /** Remote operation error: the peer could not complete the request (a bad receive WQE). */
    REM_OP_ERR,
    /** Transport retry counter exceeded: the peer did not answer (dead, disconnected, unreachable). */
    RETRY_EXC_ERR,
    /** Receiver-not-ready retry counter exceeded: the peer posted no receive in time. */
    RNR_RETRY_EXC_ERR,
    /** Local RDD violation (reliable datagram only). */
    LOC_RDD_VIOL_ERR,
    /** Remote invalid RD request (reliable datagram only). */
    REM_INV_RD_REQ_ERR,
    /** Remote aborted. */
    REM_ABORT_ERR,
    /** Invalid EE context number. */
    INV_EECN_ERR,
    /** Invalid EE context state. */
    INV_EEC_STATE_ERR,
    /** Fatal device error. */
    FATAL_ERR,
    /** Response timeout. */
    RESP_TIMEOUT_ERR,
    /** General error. */
    GENERAL_ERR;

    private static final WcStatus[] BY_CODE = values();

    /**
     * The {@code ibv_wc_status} value.
     *
     * @return the verbs code
     */
    public int code() {
        return ordinal();
    }

    /**
     * Looks a status up by its verbs code.
     *
     * @param code an {@code ibv_wc_status} value
     * @return the status, or {@link #GENERAL_ERR} for an unknown code
     */
    public static WcStatus of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : GENERAL_ERR;
    }
}
