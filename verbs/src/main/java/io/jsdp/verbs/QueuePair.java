package io.jsdp.verbs;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}), created through {@link CmId#createQueuePair}
 * in {@link QpState#INIT}; the connection manager moves it to RTR and RTS when the connection is
 * established.
 *
 * <p>Posting is a hot path: the post methods allocate nothing, never throw for a bad request and
 * return an {@link Errno} code as {@code ibv_post_send} does. A post to a queue pair in
 * {@link QpState#ERROR} is accepted and completed at once with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface QueuePair extends AutoCloseable {
    /** {@link #rnrRetries()} of a device that does not count receiver-not-ready retries per queue pair. */
    long RNR_RETRIES_NOT_AVAILABLE = -1;

    /**
     * The queue-pair number, unique on its device.
     *
     * @return the number
     */
    int qpNumber();

    /**
     * The current state.
     *
     * @return the state
     */
    QpState state();

    /**
     * Posts a send-queue request ({@code ibv_post_send}).
     *
     * @param request the request; copied, so it may be reused as soon as the call returns
     * @return {@link Errno#OK}; {@link Errno#EINVAL} before RTS, for more entries than
     *     {@link QueuePairAttributes#maxSendSge()}, inline data longer than
     *     {@link QueuePairAttributes#maxInlineData()} or an opcode the device does not support;
     *     {@link Errno#ENOMEM} when {@link QueuePairAttributes#maxSendWr()} requests are outstanding
     */
    int postSend(SendWorkRequest request);

    /**
     * Posts a receive-queue request ({@code ibv_post_recv}).
     *
     * @param request the request; copied, so it may be reused as soon as the call returns
     * @return {@link Errno#OK}; {@link Errno#EINVAL} in RESET or for too many entries;
     *     {@link Errno#ENOMEM} when {@link QueuePairAttributes#maxRecvWr()} receives are posted
     */
    int postRecv(ReceiveWorkRequest request);

    /**
     * Moves the queue pair to {@link QpState#ERROR} (flushing everything outstanding) or to
     * {@link QpState#RESET} (discarding everything, no completions) and from RESET to INIT.
     * The INIT → RTR → RTS moves belong to the connection manager.
     *
     * @param target ERROR, RESET or INIT
     * @throws VerbsException {@link Errno#EINVAL} for any other move
     */
    void modify(QpState target) throws VerbsException;

    /**
     * The attributes the queue pair was created with.
     *
     * @return the attributes (a copy)
     */
    QueuePairAttributes attributes();

    /**
     * The protection domain.
     *
     * @return the domain
     */
    ProtectionDomain protectionDomain();

    /**
     * Receiver-not-ready retries of this queue pair as requester since creation: times a request found no
     * receive posted at the peer and the device waited for one (seed 001's NIC-assisted flow control
     * relies on them). A statistic, not for hot paths.
     *
     * <p>libibverbs has no per-queue-pair counter for this: hardware devices count RNR NAKs per port
     * (e.g. mlx5's {@code hw_counters/rnr_nak_retry_err}, rxe's {@code rcvd_rnr_err} under
     * {@code /sys/class/infiniband/<device>/ports/<port>/}), per queue pair only through kernel counters
     * bound with {@code rdma statistic}, which DiSNI does not reach. Such devices return
     * {@link #RNR_RETRIES_NOT_AVAILABLE}, never an invented zero.
     *
     * @return the count, or {@link #RNR_RETRIES_NOT_AVAILABLE}
     */
    default long rnrRetries() {
        return RNR_RETRIES_NOT_AVAILABLE;
    }

    /**
     * The kernel object through which the peer wakes a thread waiting for this queue pair directly,
     * or null when the device has none (hardware, where the completion channel's descriptor serves all
     * of its queues; SoftRdma between devices of one process).
     *
     * @return the wake channel, or null
     */
    default WakeChannel wakeChannel() {
        return null;
    }

    /**
     * The device's own view of this queue pair for dumps and first-failure data (its queues' positions,
     * why its send queue waits), read without locks; empty where the device tells nothing beyond
     * {@link #state()}.
     *
     * @return one line, or an empty string
     */
    default String describeDeviceState() {
        return "";
    }

    /**
     * Destroys the queue pair ({@code ibv_destroy_qp}). Outstanding requests vanish without
     * completions; a connected peer's later requests fail with {@link WcStatus#RETRY_EXC_ERR}.
     * Idempotent.
     */
    @Override
    void close();
}
