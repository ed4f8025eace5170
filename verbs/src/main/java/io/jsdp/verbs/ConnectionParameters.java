package io.jsdp.verbs;

/**
 * Parameters of {@link CmId#connect} and {@link CmId#accept} ({@code struct rdma_conn_param}). The
 * retry counts follow the InfiniBand specification: 0–7, and an RNR retry count of 7 means
 * "retry forever"; a transport retry count of 7 means seven retries.
 */
public final class ConnectionParameters {
    /** Most private-data bytes a connect carries (92 of the REQ less rdma_cm's 36-byte header). */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;
    /** Most private-data bytes an accept carries (the REP's 196). */
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;
    /** Most private-data bytes a reject carries (the REJ's 148). */
    public static final int MAX_REJECT_PRIVATE_DATA = 148;
    /** Default time a connect waits for the peer's answer before {@link CmEventType#UNREACHABLE}. */
    public static final int CONNECT_TIMEOUT_DEFAULT_MS = 4_000;
    /** The RNR retry count that means "retry forever". */
    public static final int RNR_RETRY_INFINITE = 7;

    private int retryCount = 7;
    private int rnrRetryCount;
    private byte[] privateData = new byte[0];
    private int connectTimeoutMs = CONNECT_TIMEOUT_DEFAULT_MS;

    /** Creates parameters: 7 transport retries, no RNR retries, no private data. */
    public ConnectionParameters() {
    }

    /**
     * Sets the transport retry count.
     *
     * @param n 0..7
     * @return this
     */
    public ConnectionParameters retryCount(int n) {
        if (n < 0 || n > 7) {
            throw new IllegalArgumentException("retryCount must be 0..7: " + n);
        }
        this.retryCount = n;
        return this;
    }

    /**
     * Sets the receiver-not-ready retry count.
     *
     * @param n 0..7, where 7 is infinite
     * @return this
     */
    public ConnectionParameters rnrRetryCount(int n) {
        if (n < 0 || n > 7) {
            throw new IllegalArgumentException("rnrRetryCount must be 0..7: " + n);
        }
        this.rnrRetryCount = n;
        return this;
    }

    /**
     * Sets the private data carried by the connect, accept or reject.
     *
     * @param data the bytes (copied); at most {@link #MAX_CONNECT_PRIVATE_DATA} for a connect
     * @return this
     */
    public ConnectionParameters privateData(byte[] data) {
        this.privateData = data.clone();
        return this;
    }

    /**
     * Sets how long a connect waits for the peer's answer.
     *
     * @param ms milliseconds, positive
     * @return this
     */
    public ConnectionParameters connectTimeoutMs(int ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException("connectTimeoutMs must be positive: " + ms);
        }
        this.connectTimeoutMs = ms;
        return this;
    }

    /**
     * The transport retry count.
     *
     * @return 0..7
     */
    public int retryCount() {
        return retryCount;
    }

    /**
     * The RNR retry count.
     *
     * @return 0..7
     */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /**
     * The private data.
     *
     * @return a copy of the bytes
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * The connect timeout.
     *
     * @return milliseconds
     */
    public int connectTimeoutMs() {
        return connectTimeoutMs;
    }
}
