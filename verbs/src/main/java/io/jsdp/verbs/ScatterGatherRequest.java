package io.jsdp.verbs;

/**
 * The scatter/gather list shared by {@link SendWorkRequest} and {@link ReceiveWorkRequest}: parallel
 * primitive arrays of a fixed capacity, so filling and reading a request allocates nothing. Setters
 * return the concrete request type, so calls chain.
 *
 * @param <T> the concrete request type
 */
abstract class ScatterGatherRequest<T extends ScatterGatherRequest<T>> {
    private final long[] sgeAddress;
    private final int[] sgeLength;
    private final int[] sgeLkey;
    private int numSge;

    ScatterGatherRequest(int maxSge) {
        if (maxSge < 1) {
            throw new IllegalArgumentException("maxSge must be at least 1: " + maxSge);
        }
        sgeAddress = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
    }

    /** This request, typed as itself. */
    abstract T self();

    /**
     * Sets scatter/gather entry {@code index} and makes the list at least {@code index + 1} long.
     *
     * @param index the entry, below the capacity
     * @param address the local address (region address plus offset)
     * @param length the number of bytes
     * @param lkey the local key of the region holding the bytes (a receive's region needs
     *     {@link Access#LOCAL_WRITE})
     * @return this
     */
    public T sge(int index, long address, int length, int lkey) {
        sgeAddress[index] = address;
        sgeLength[index] = length;
        sgeLkey[index] = lkey;
        if (numSge <= index) {
            numSge = index + 1;
        }
        return self();
    }

    /**
     * Sets the number of scatter/gather entries in use.
     *
     * @param numSge between 0 and the capacity
     * @return this
     */
    public T numSge(int numSge) {
        if (numSge < 0 || numSge > sgeAddress.length) {
            throw new IllegalArgumentException("numSge " + numSge + " outside 0.." + sgeAddress.length);
        }
        this.numSge = numSge;
        return self();
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
