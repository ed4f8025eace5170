package io.jsdp.verbs;

/**
 * A receive-queue work request ({@code struct ibv_recv_wr}), mutable and reusable. A device copies it
 * at post time.
 */
public final class ReceiveWorkRequest extends ScatterGatherRequest<ReceiveWorkRequest> {
    private long wrId;

    /** Creates a request with room for four scatter/gather entries. */
    public ReceiveWorkRequest() {
        this(4);
    }

    /**
     * Creates a request with room for {@code maxSge} scatter/gather entries.
     *
     * @param maxSge the capacity, at least 1
     */
    public ReceiveWorkRequest(int maxSge) {
        super(maxSge);
    }

    @Override
    ReceiveWorkRequest self() {
        return this;
    }

    /**
     * Sets the caller's identifier, returned in the completion.
     *
     * @param wrId any value
     * @return this
     */
    public ReceiveWorkRequest wrId(long wrId) {
        this.wrId = wrId;
        return this;
    }

    /**
     * The caller's identifier.
     *
     * @return the wr id
     */
    public long wrId() {
        return wrId;
    }
}
