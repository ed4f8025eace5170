package io.jsdp.verbs;

/**
 * A receive-queue work request ({@code struct ibv_recv_wr}), mutable and reusable. A device copies it
 * at post time.
 */
public final class ReceiveWorkRequest {
    private final long[] sgeAddress;
    private final int[] sgeLength;
    private final int[] sgeLkey;
    private int numSge;
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
        if (maxSge < 1) {
            throw new IllegalArgumentException("maxSge must be at least 1: " + maxSge);
        }
        sgeAddress = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
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
     * Sets scatter/gather entry {@code index} and makes the list at least {@code index + 1} long.
     *
     * @param index the entry, below the capacity
     * @param address the local address (region address plus offset)
     * @param length the number of bytes
     * @param lkey the local key of the region, which needs {@link Access#LOCAL_WRITE}
     * @return this
     */
    public ReceiveWorkRequest sge(int index, long address, int length, int lkey) {
        sgeAddress[index] = address;
        sgeLength[index] = length;
        sgeLkey[index] = lkey;
        if (numSge <= index) {
            numSge = index + 1;
        }
        return this;
    }

    /**
     * Sets the number of scatter/gather entries in use.
     *
     * @param numSge between 0 and the capacity
     * @return this
     */
    public ReceiveWorkRequest numSge(int numSge) {
        if (numSge < 0 || numSge > sgeAddress.length) {
            throw new IllegalArgumentException("numSge " + numSge + " outside 0.." + sgeAddress.length);
        }
        this.numSge = numSge;
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

    /**
     * The number of scatter/gather entries in use.
     *
     * @return the count
     */
    public int numSge() {
        return numSge;
    }

    /**
     * The capacity of the scatter/gather list.
     *
     * @return the maximum number of entries
     */
    public int maxSge() {
        return sgeAddress.length;
    }

    /**
     * The address of entry {@code index}.
     *
     * @param index the entry
     * @return its address
     */
    public long sgeAddress(int index) {
        return sgeAddress[index];
    }

    /**
     * The length of entry {@code index}.
     *
     * @param index the entry
     * @return its length in bytes
     */
    public int sgeLength(int index) {
        return sgeLength[index];
    }

    /**
     * The local key of entry {@code index}.
     *
     * @param index the entry
     * @return its lkey
     */
    public int sgeLkey(int index) {
        return sgeLkey[index];
    }
}
