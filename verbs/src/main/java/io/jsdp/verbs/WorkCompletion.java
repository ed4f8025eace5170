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

    private long wrId;
    private WcStatus status = WcStatus.SUCCESS;
    private WcOpcode opcode = WcOpcode.SEND;
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
        this.status = status;
        this.opcode = opcode;
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
        return status;
    }

    /**
     * Whether the request succeeded.
     *
     * @return true for {@link WcStatus#SUCCESS}
     */
    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    /**
     * What completed.
     *
     * @return the opcode
     */
    public WcOpcode opcode() {
        return opcode;
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
        return "WorkCompletion{wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byteLen="
            + byteLen + ", imm=" + immData + ", flags=" + flags + ", qp=" + qpNumber + '}';
    }
}
