package io.jsdp.verbs;

/**
 * A send-queue work request ({@code struct ibv_send_wr}), mutable and reusable so the post path
 * allocates nothing. A device copies what it needs at post time: changing the object after
 * {@link QueuePair#postSend} returns does not change the posted request, and posting the same object
 * again posts its current values.
 *
 * <p>Addresses are in the device's address space: an SGE address is
 * {@link MemoryRegion#address()} plus an offset into that region.
 */
public final class SendWorkRequest {
    private final long[] sgeAddress;
    private final int[] sgeLength;
    private final int[] sgeLkey;
    private int numSge;
    private long wrId;
    private Opcode opcode = Opcode.SEND;
    private int flags;
    private int immData;
    private long remoteAddress;
    private int rkey;

    /** Creates a request with room for four scatter/gather entries (DiSNI's limit). */
    public SendWorkRequest() {
        this(4);
    }

    /**
     * Creates a request with room for {@code maxSge} scatter/gather entries.
     *
     * @param maxSge the capacity, at least 1
     */
    public SendWorkRequest(int maxSge) {
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
    public SendWorkRequest wrId(long wrId) {
        this.wrId = wrId;
        return this;
    }

    /**
     * Sets the operation.
     *
     * @param opcode the opcode
     * @return this
     */
    public SendWorkRequest opcode(Opcode opcode) {
        this.opcode = opcode;
        return this;
    }

    /**
     * Sets the {@link SendFlags}.
     *
     * @param flags a combination of {@link SendFlags} constants
     * @return this
     */
    public SendWorkRequest flags(int flags) {
        this.flags = flags;
        return this;
    }

    /**
     * Sets the immediate value of {@code *_WITH_IMM} opcodes.
     *
     * @param immData the value delivered in the peer's receive completion
     * @return this
     */
    public SendWorkRequest immData(int immData) {
        this.immData = immData;
        return this;
    }

    /**
     * Sets the remote address and key of RDMA opcodes.
     *
     * @param address the address in the peer device's address space
     * @param rkey the peer region's remote key
     * @return this
     */
    public SendWorkRequest remote(long address, int rkey) {
        this.remoteAddress = address;
        this.rkey = rkey;
        return this;
    }

    /**
     * Sets scatter/gather entry {@code index} and makes the list at least {@code index + 1} long.
     *
     * @param index the entry, below the capacity
     * @param address the local address (region address plus offset)
     * @param length the number of bytes
     * @param lkey the local key of the region holding the bytes
     * @return this
     */
    public SendWorkRequest sge(int index, long address, int length, int lkey) {
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
    public SendWorkRequest numSge(int numSge) {
        if (numSge < 0 || numSge > sgeAddress.length) {
            throw new IllegalArgumentException("numSge " + numSge + " outside 0.." + sgeAddress.length);
        }
        this.numSge = numSge;
        return this;
    }

    /**
     * Resets every field to its initial value (opcode {@link Opcode#SEND}, no entries, no flags).
     *
     * @return this
     */
    public SendWorkRequest clear() {
        numSge = 0;
        wrId = 0;
        opcode = Opcode.SEND;
        flags = 0;
        immData = 0;
        remoteAddress = 0;
        rkey = 0;
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
     * The operation.
     *
     * @return the opcode
     */
    public Opcode opcode() {
        return opcode;
    }

    /**
     * The {@link SendFlags}.
     *
     * @return the flags
     */
    public int flags() {
        return flags;
    }

    /**
     * The immediate value.
     *
     * @return the immediate value
     */
    public int immData() {
        return immData;
    }

    /**
     * The remote address of RDMA opcodes.
     *
     * @return the remote address
     */
    public long remoteAddress() {
        return remoteAddress;
    }

    /**
     * The remote key of RDMA opcodes.
     *
     * @return the rkey
     */
    public int rkey() {
        return rkey;
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

    /**
     * The total payload length, the sum of the entries' lengths.
     *
     * @return the number of bytes the request moves
     */
    public long totalLength() {
        long total = 0;
        for (int i = 0; i < numSge; i++) {
            total += sgeLength[i];
        }
        return total;
    }
}
