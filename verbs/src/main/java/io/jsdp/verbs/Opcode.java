package io.jsdp.verbs;

/** Send work-request opcodes ({@code enum ibv_wr_opcode}). Atomics are listed so devices can refuse them. */
public enum Opcode {
    /** RDMA WRITE into a remote region. */
    RDMA_WRITE(0, true, false),
    /** RDMA WRITE that also consumes a receive at the peer and delivers the immediate value. */
    RDMA_WRITE_WITH_IMM(1, true, true),
    /** Send into the next posted receive of the peer. */
    SEND(2, false, true),
    /** Send with an immediate value. */
    SEND_WITH_IMM(3, false, true),
    /** RDMA READ from a remote region into local memory. */
    RDMA_READ(4, true, false),
    /** Atomic compare-and-swap (not supported by every device). */
    ATOMIC_CMP_AND_SWP(5, true, false),
    /** Atomic fetch-and-add (not supported by every device). */
    ATOMIC_FETCH_AND_ADD(6, true, false);

    private final int code;
    private final boolean remote;
    private final boolean consumesReceive;

    Opcode(int code, boolean remote, boolean consumesReceive) {
        this.code = code;
        this.remote = remote;
        this.consumesReceive = consumesReceive;
    }

    /**
     * The {@code ibv_wr_opcode} value.
     *
     * @return the verbs code
     */
    public int code() {
        return code;
    }

    /**
     * Whether the request names a remote address and rkey.
     *
     * @return true for RDMA and atomic opcodes
     */
    public boolean isRemote() {
        return remote;
    }

    /**
     * Whether the request consumes a receive posted at the peer.
     *
     * @return true for sends and RDMA WRITE with immediate
     */
    public boolean consumesReceive() {
        return consumesReceive;
    }

    /**
     * Whether the request carries an immediate value.
     *
     * @return true for the {@code *_WITH_IMM} opcodes
     */
    public boolean hasImmediate() {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }
}
