package io.jsdp.verbs;

/**
 * Attributes of a new queue pair ({@code struct ibv_qp_init_attr} plus the timing attributes of
 * {@code ibv_modify_qp}). Mutable builder; a device copies it.
 */
public final class QueuePairAttributes {
    /** Device default for the transport ACK timeout: the verbs default code 14, 4.096 µs × 2^14. */
    public static final long ACK_TIMEOUT_DEFAULT_NS = 67_108_864L;
    /** Device default for the minimum RNR NAK timer: verbs code 12, 0.64 ms. */
    public static final long MIN_RNR_TIMER_DEFAULT_NS = 640_000L;

    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private int maxSendWr = 64;
    private int maxRecvWr = 64;
    private int maxSendSge = 4;
    private int maxRecvSge = 4;
    private int maxInlineData = 64;
    private boolean signalAll;
    private long ackTimeoutNs = ACK_TIMEOUT_DEFAULT_NS;
    private long minRnrTimerNs = MIN_RNR_TIMER_DEFAULT_NS;

    /** Creates attributes with the defaults: 64 requests each way, 4 SGEs, 64 inline bytes. */
    public QueuePairAttributes() {
    }

    /**
     * Copies attributes.
     *
     * @return an independent copy
     */
    public QueuePairAttributes copy() {
        QueuePairAttributes c = new QueuePairAttributes();
        c.sendCq = sendCq;
        c.recvCq = recvCq;
        c.maxSendWr = maxSendWr;
        c.maxRecvWr = maxRecvWr;
        c.maxSendSge = maxSendSge;
        c.maxRecvSge = maxRecvSge;
        c.maxInlineData = maxInlineData;
        c.signalAll = signalAll;
        c.ackTimeoutNs = ackTimeoutNs;
        c.minRnrTimerNs = minRnrTimerNs;
        return c;
    }

    /**
     * Sets the completion queue of the send queue.
     *
     * @param cq the queue
     * @return this
     */
    public QueuePairAttributes sendCq(CompletionQueue cq) {
        this.sendCq = cq;
        return this;
    }

    /**
     * Sets the completion queue of the receive queue.
     *
     * @param cq the queue
     * @return this
     */
    public QueuePairAttributes recvCq(CompletionQueue cq) {
        this.recvCq = cq;
        return this;
    }

    /**
     * Sets the capacity of the send queue.
     *
     * @param n outstanding send requests
     * @return this
     */
    public QueuePairAttributes maxSendWr(int n) {
        this.maxSendWr = n;
        return this;
    }

    /**
     * Sets the capacity of the receive queue.
     *
     * @param n posted receives
     * @return this
     */
    public QueuePairAttributes maxRecvWr(int n) {
        this.maxRecvWr = n;
        return this;
    }

    /**
     * Sets the most scatter/gather entries per send request.
     *
     * @param n entries
     * @return this
     */
    public QueuePairAttributes maxSendSge(int n) {
        this.maxSendSge = n;
        return this;
    }

    /**
     * Sets the most scatter/gather entries per receive request.
     *
     * @param n entries
     * @return this
     */
    public QueuePairAttributes maxRecvSge(int n) {
        this.maxRecvSge = n;
        return this;
    }

    /**
     * Sets the most bytes a send request may carry inline.
     *
     * @param n bytes
     * @return this
     */
    public QueuePairAttributes maxInlineData(int n) {
        this.maxInlineData = n;
        return this;
    }

    /**
     * Makes every send request signaled ({@code sq_sig_all}).
     *
     * @param signalAll true to complete every send request
     * @return this
     */
    public QueuePairAttributes signalAll(boolean signalAll) {
        this.signalAll = signalAll;
        return this;
    }

    /**
     * Sets the transport ACK timeout: a request the peer does not answer is retried after it, and fails
     * with {@link WcStatus#RETRY_EXC_ERR} after {@code ackTimeoutNs × (retryCount + 1)}. Devices that
     * take the value from the fabric (DiSNI: librdmacm's path record) may ignore it.
     *
     * @param ns the timeout in nanoseconds, positive
     * @return this
     */
    public QueuePairAttributes ackTimeoutNs(long ns) {
        this.ackTimeoutNs = ns;
        return this;
    }

    /**
     * Sets the minimum receiver-not-ready timer this queue pair asks its peer to wait before resending
     * a request it had no receive for.
     *
     * @param ns the timer in nanoseconds, positive
     * @return this
     */
    public QueuePairAttributes minRnrTimerNs(long ns) {
        this.minRnrTimerNs = ns;
        return this;
    }

    /**
     * The send completion queue.
     *
     * @return the queue
     */
    public CompletionQueue sendCq() {
        return sendCq;
    }

    /**
     * The receive completion queue.
     *
     * @return the queue
     */
    public CompletionQueue recvCq() {
        return recvCq;
    }

    /**
     * The send-queue capacity.
     *
     * @return outstanding send requests
     */
    public int maxSendWr() {
        return maxSendWr;
    }

    /**
     * The receive-queue capacity.
     *
     * @return posted receives
     */
    public int maxRecvWr() {
        return maxRecvWr;
    }

    /**
     * The most entries per send request.
     *
     * @return entries
     */
    public int maxSendSge() {
        return maxSendSge;
    }

    /**
     * The most entries per receive request.
     *
     * @return entries
     */
    public int maxRecvSge() {
        return maxRecvSge;
    }

    /**
     * The most inline bytes per send request.
     *
     * @return bytes
     */
    public int maxInlineData() {
        return maxInlineData;
    }

    /**
     * Whether every send request is signaled.
     *
     * @return {@code sq_sig_all}
     */
    public boolean signalAll() {
        return signalAll;
    }

    /**
     * The transport ACK timeout.
     *
     * @return nanoseconds
     */
    public long ackTimeoutNs() {
        return ackTimeoutNs;
    }

    /**
     * The minimum RNR timer.
     *
     * @return nanoseconds
     */
    public long minRnrTimerNs() {
        return minRnrTimerNs;
    }
}
