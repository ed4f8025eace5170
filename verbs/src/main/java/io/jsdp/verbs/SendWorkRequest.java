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
public final class SendWorkRequest extends ScatterGatherRequest<SendWorkRequest> {
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
        super(maxSge);
    }

    @Override
    SendWorkRequest self() {
        return this;
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
     * Resets every field to its initial value (opcode {@link Opcode#SEND}, no entries, no flags).
     *
     * @return this
     */
    public SendWorkRequest clear() {
        numSge(0);
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
     * The total payload length, the sum of the entries' lengths.
     *
     * @return the number of bytes the request moves
     */
    public long totalLength() {
        long total = 0;
        int n = numSge();
        for (int i = 0; i < n; i++) {
            total += sgeLength(i);
        }
        return total;
    }
}
