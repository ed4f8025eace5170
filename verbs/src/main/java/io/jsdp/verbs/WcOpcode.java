package io.jsdp.verbs;

/** Work-completion opcodes ({@code enum ibv_wc_opcode}). */
public enum WcOpcode {
    /** A send completed. */
    SEND(0),
    /** An RDMA WRITE completed. */
    RDMA_WRITE(1),
    /** An RDMA READ completed. */
    RDMA_READ(2),
    /** An atomic compare-and-swap completed. */
    COMP_SWAP(3),
    /** An atomic fetch-and-add completed. */
    FETCH_ADD(4),
    /** A receive completed (a send arrived). */
    RECV(128),
    /** A receive was consumed by an RDMA WRITE with immediate. */
    RECV_RDMA_WITH_IMM(129);

    private final int code;

    WcOpcode(int code) {
        this.code = code;
    }

    /**
     * The {@code ibv_wc_opcode} value.
     *
     * @return the verbs code
     */
    public int code() {
        return code;
    }

    /**
     * The completion opcode of a send work request.
     *
     * @param opcode the request's opcode
     * @return its completion opcode
     */
    public static WcOpcode of(Opcode opcode) {
        switch (opcode) {
            case SEND:
            case SEND_WITH_IMM:
                return SEND;
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
                return RDMA_WRITE;
            case RDMA_READ:
                return RDMA_READ;
            case ATOMIC_CMP_AND_SWP:
                return COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD:
                return FETCH_ADD;
            default:
                throw new IllegalArgumentException(String.valueOf(opcode));
        }
    }
}
