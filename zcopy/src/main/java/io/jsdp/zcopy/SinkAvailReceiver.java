package io.jsdp.zcopy;

/**
 * The data source's books for SinkAvail / RDMA WRITE zero copy ({@code docs/protocol.md} section 9,
 * "SinkAvail"): the peer's advertised buffers, oldest first, and whether the next one may still be
 * written. The bookkeeping and the peer-input checks; {@link SinkAvailWriter} wires them to the engine.
 *
 * <p>An advertisement is <em>usable</em> while its {@code non_disc} equals the stream messages (Data
 * with payload, SrcAvail) this side has sent: the sink had then received everything sent, so the next
 * bytes of the stream belong at the start of its buffer. A SinkAvail that arrives with a smaller
 * {@code non_disc} crossed a stream message on the wire and is <em>stale</em>: dropped, as every
 * pending one is when this side sends a stream message ({@link #onStreamMessageSent()}); the sink
 * drops it too when that message reaches it ({@link SinkAvailSender}). A {@code non_disc} larger than
 * what was sent is a violation (the sink counts messages that never went).
 *
 * <p>Not thread-safe: runs under the connection's lock. Allocates nothing.
 */
final class SinkAvailReceiver {
    /** {@link #onSinkAvail} status: pending now. */
    static final int ACCEPTED = 0;
    /** {@link #onSinkAvail} status: stale, dropped (not an error). */
    static final int STALE = 1;
    /** {@link #onSinkAvail} status: size 0 or {@code non_disc} beyond what was sent (violation). */
    static final int BAD = -1;
    /** {@link #onSinkAvail} status: more pending than this side accepts (violation). */
    static final int TOO_MANY = -2;

    private final int maxPending;
    private final int[] size;
    private final int[] rkey;
    private final long[] addr;
    private long head;
    private long tail;
    /** Stream messages sent (Data with payload, SrcAvail). */
    private int streamMessages;
    /** A SinkAvailCancel arrived: a SinkCancelAck must go. */
    private boolean ackDue;
    private long stale;
    private long used;

    /**
     * Books for up to {@code maxPending} advertisements (this side's {@code max_adverts}).
     *
     * @param maxPending at least 1
     */
    SinkAvailReceiver(int maxPending) {
        if (maxPending < 1) {
            throw new IllegalArgumentException("maxPending " + maxPending);
        }
        this.maxPending = maxPending;
        this.size = new int[maxPending];
        this.rkey = new int[maxPending];
        this.addr = new long[maxPending];
    }

    /**
     * A SinkAvail arrived.
     *
     * @param bytes its size (u32)
     * @param key its rkey
     * @param address its address
     * @param nonDisc its {@code non_disc}
     * @return {@link #ACCEPTED}, {@link #STALE}, {@link #BAD} or {@link #TOO_MANY}
     */
    int onSinkAvail(long bytes, int key, long address, int nonDisc) {
        if (bytes < 1 || bytes > Integer.MAX_VALUE || nonDisc - streamMessages > 0) {
            return BAD;
        }
        if (nonDisc != streamMessages) {
            stale++;
            return STALE;
        }
        if (tail - head == maxPending) {
            return TOO_MANY;
        }
        int i = (int) (tail++ % maxPending);
        size[i] = (int) bytes;
        rkey[i] = key;
        addr[i] = address;
        return ACCEPTED;
    }

    /**
     * Stream messages sent so far.
     *
     * @return the count a SinkAvail usable now carries as {@code non_disc}
     */
    int streamMessagesSent() {
        return streamMessages;
    }

    /**
     * Advertisements pending.
     *
     * @return the count
     */
    int pending() {
        return (int) (tail - head);
    }

    /** This side sent a stream message: it counts, and every pending advertisement is void. */
    void onStreamMessageSent() {
        streamMessages++;
        stale += tail - head;
        head = tail;
    }

    /**
     * Whether an advertisement may be written now.
     *
     * @return true when one is pending (pending ones are always usable: sending voids them)
     */
    boolean usable() {
        return tail != head;
    }

    /**
     * The oldest pending advertisement's size.
     *
     * @return bytes
     */
    int headBytes() {
        return size[(int) (head % maxPending)];
    }

    /**
     * The oldest pending advertisement's rkey.
     *
     * @return the key
     */
    int headRkey() {
        return rkey[(int) (head % maxPending)];
    }

    /**
     * The oldest pending advertisement's address.
     *
     * @return the address
     */
    long headAddress() {
        return addr[(int) (head % maxPending)];
    }

    /**
     * The RDMA WRITE into the oldest advertisement and its RdmaWrCompl were posted: it is retired.
     *
     * @param bytes bytes written, 1 … {@link #headBytes()}
     */
    void retireHead(int bytes) {
        if (!usable() || bytes < 1 || bytes > headBytes()) {
            throw new IllegalStateException("retire " + bytes + " of " + (usable() ? headBytes() : 0));
        }
        head++;
        used++;
    }

    /** SinkAvailCancel arrived: every pending advertisement is dropped and a SinkCancelAck is due. */
    void onCancel() {
        stale += tail - head;
        head = tail;
        ackDue = true;
    }

    /**
     * Whether a SinkCancelAck must go.
     *
     * @return true after {@link #onCancel()} until {@link #ackSent()}
     */
    boolean ackDue() {
        return ackDue;
    }

    /** The SinkCancelAck was posted. */
    void ackSent() {
        ackDue = false;
    }

    /**
     * Advertisements dropped unwritten (stale, voided by a send, cancelled).
     *
     * @return the count
     */
    long stale() {
        return stale;
    }

    /**
     * Advertisements written into.
     *
     * @return the count
     */
    long used() {
        return used;
    }

    String describe() {
        return "sinkAdverts=" + (tail - head) + " used=" + used + " stale=" + stale + (ackDue ? " ackDue" : "");
    }
}
