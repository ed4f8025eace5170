package io.jsdp.verbs;

/**
 * One work completion ({@code struct ibv_wc}), mutable so a poller reuses an array of them and the
 * poll path allocates nothing.
 *
 * <p>On error only {@link #wrId()}, {@link #status()}, {@link #opcode()} and {@link #qpNumber()} are
 * meaningful (the verbs man page; DiSNI even leaves {@code qp_num} stale): never read the other
 * fields of an unsuccessful completion.
 */
public final class WorkCompletion {
    /** {@link #flags()} bit: the completion carries an immediate value ({@code IBV_WC_WITH_IMM}). */
    public static final int WITH_IMM = 1 << 1;

    private static final WcStatus[] STATUSES = WcStatus.values();
    private static final WcOpcode[] OPCODES = WcOpcode.values();

    private long wrId;
    // Ordinals, not references: a reference stored into a long-lived object costs G1 a write barrier
    // and its refinement threads a card, twice per completion on the hot path of every poll.
    private byte status = (byte) WcStatus.SUCCESS.ordinal();
    private byte opcode = (byte) WcOpcode.SEND.ordinal();
    private int byteLen;
    private int immData;
    private int flags;
    private int qpNumber;

    /** Creates an empty completion for a poll array. */
    public WorkCompletion() {
    }

    /**
     * Fills every field; devices call this from their poll.
     *
     * @param wrId the request's identifier
     * @param status the outcome
     * @param opcode what completed
     * @param byteLen bytes received (receives) or read (RDMA READ)
     * @param immData the immediate value when {@code flags} has {@link #WITH_IMM}
     * @param flags completion flags
     * @param qpNumber the queue pair the request was posted to
     */
    public void set(long wrId, WcStatus status, WcOpcode opcode, int byteLen, int immData, int flags,
                    int qpNumber) {
        this.wrId = wrId;
        this.status = (byte) status.ordinal();
        this.opcode = (byte) opcode.ordinal();
        this.byteLen = byteLen;
        this.immData = immData;
        this.flags = flags;
        this.qpNumber = qpNumber;
    }

    /**
     * The completed request's identifier.
     *
     * @return the wr id
     */
    public long wrId() {
        return wrId;
    }

    /**
     * The outcome.
     *
     * @return the status
     */
    public WcStatus status() {
        return STATUSES[status];
    }

    /**
     * Whether the request succeeded.
     *
     * @return true for {@link WcStatus#SUCCESS}
     */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS.ordinal();
    }

    /**
     * What completed.
     *
     * @return the opcode
     */
    public WcOpcode opcode() {
        return OPCODES[opcode];
    }

    /**
     * Bytes received or read; valid on success only.
     *
     * @return the byte count
     */
    public int byteLen() {
        return byteLen;
    }

    /**
     * The immediate value; valid when {@link #flags()} has {@link #WITH_IMM}.
     *
     * @return the immediate value
     */
    public int immData() {
        return immData;
    }

    /**
     * Completion flags.
     *
     * @return a combination of {@link #WITH_IMM}
     */
    public int flags() {
        return flags;
    }

    /**
     * The queue pair the request was posted to.
     *
     * @return the queue-pair number
     */
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public String toString() {
        return "WorkCompletion{wrId=" + wrId + ", status=" + status() + ", opcode=" + opcode() + ", byteLen="
            + byteLen + ", imm=" + immData + ", flags=" + flags + ", qp=" + qpNumber + '}';
    }
}
