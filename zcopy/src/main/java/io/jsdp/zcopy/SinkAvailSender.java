package io.jsdp.zcopy;

/**
 * The data sink's books for SinkAvail / RDMA WRITE zero copy (the sink advertises its reader's buffer,
 * the source RDMA-WRITEs into it and retires the advertisement with RdmaWrCompl; {@code docs/protocol.md}
 * section 9, "SinkAvail"). The bookkeeping and the peer-input checks; {@link SinkAvailReader} wires them
 * to the engine. One advertisement at a time, for the one blocked reader.
 *
 * <p><b>Stale adverts.</b> Both sides count <em>stream messages</em>: Data with payload and SrcAvail
 * (credit updates and control messages do not count). A SinkAvail carries, as {@code non_disc}, the
 * stream messages the sink had received when it sent it. The source writes into an advertisement
 * only while it has sent exactly that many ({@link SinkAvailReceiver}); every stream message it sends
 * voids its pending advertisements. So once the sink receives a stream message while its
 * advertisement is out, the source will never write into that buffer (it either got the SinkAvail
 * after sending the message — stale — or voided it by sending): {@link #onStreamMessage()} frees the
 * buffer at once. An RdmaWrCompl always arrives before such a message (the source posts its RDMA
 * WRITE and the RdmaWrCompl before anything else; write-before-send ordering on the queue pair).
 *
 * <p><b>The buffer guarantee.</b> The buffer is the peer's to write from {@link #advertise} until
 * {@link #bufferFree()}: after an RdmaWrCompl, a stream message, or the SinkCancelAck answering
 * {@link #cancel()}. A reader that leaves earlier (timeout, interrupt) must cancel and wait for that;
 * a close resets the connection instead (its queue pair is destroyed before the reader returns).
 *
 * <p>Not thread-safe: runs under the connection's lock. Allocates nothing.
 */
final class SinkAvailSender {
    /** {@link #onWriteCompletion}/{@link #onCancelAck} status: no advertisement or cancel outstanding. */
    static final int NOT_OUTSTANDING = -1;
    /** {@link #onWriteCompletion} status: 0 bytes or more than advertised. */
    static final int OVERRUN = -2;

    private static final byte IDLE = 0;
    private static final byte ADVERTISED = 1;

    private byte state = IDLE;
    /** A SinkAvailCancel went and its SinkCancelAck has not come back. */
    private boolean cancelSent;
    private int advertBytes;
    /** Stream messages received (Data with payload, SrcAvail): the next SinkAvail's {@code non_disc}. */
    private int streamMessages;
    private long written;
    private long voided;

    /**
     * The reader's buffer is advertised now: the SinkAvail to send carries {@code bytes} and the
     * returned {@code non_disc}.
     *
     * @param bytes the buffer's size, at least 1
     * @return the {@code non_disc} to send
     * @throws IllegalStateException when a buffer is still advertised or a cancel unanswered
     */
    int advertise(int bytes) {
        if (!bufferFree()) {
            throw new IllegalStateException("an advertisement is outstanding");
        }
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes " + bytes);
        }
        state = ADVERTISED;
        advertBytes = bytes;
        return streamMessages;
    }

    /** The SinkAvail {@link #advertise} booked could not be posted (no credit): as if never advertised. */
    void withdrawUnsent() {
        if (state != ADVERTISED) {
            throw new IllegalStateException("nothing advertised");
        }
        state = IDLE;
    }

    /**
     * The peer's DisConn arrived: it writes nothing more, so the advertisement is void and an unanswered
     * cancel is settled (the peer may have ended before it saw it).
     *
     * @return true when an advertisement was outstanding and is void now
     */
    boolean onPeerOutputEnded() {
        cancelSent = false;
        if (state == ADVERTISED) {
            state = IDLE;
            voided++;
            return true;
        }
        return false;
    }

    /**
     * Whether a SinkAvailCancel went and its SinkCancelAck has not come back.
     *
     * @return true while the answer is due
     */
    boolean cancelOutstanding() {
        return cancelSent;
    }

    /**
     * A stream message (Data with payload, or SrcAvail) arrived: it counts, and it voids the
     * advertisement outstanding (the source will not write it).
     *
     * @return true when an advertisement was outstanding and is void now (release its registration)
     */
    boolean onStreamMessage() {
        streamMessages++;
        if (state == ADVERTISED) {
            state = IDLE;
            voided++;
            return true;
        }
        return false;
    }

    /**
     * RdmaWrCompl arrived: the source wrote {@code size} bytes at the start of the advertised buffer and
     * retired the advertisement.
     *
     * @param size the RWCH size
     * @return the bytes for the reader, or {@link #NOT_OUTSTANDING} / {@link #OVERRUN} (violations)
     */
    int onWriteCompletion(long size) {
        if (state != ADVERTISED) {
            return NOT_OUTSTANDING;
        }
        if (size < 1 || size > advertBytes) {
            return OVERRUN;
        }
        state = IDLE;
        written += size;
        return (int) size;
    }

    /**
     * The reader leaves before its buffer was written.
     *
     * @return true when a SinkAvailCancel must go (an advertisement is outstanding); false when the
     *     buffer is free already or a cancel is on its way
     */
    boolean cancel() {
        if (state != ADVERTISED || cancelSent) {
            return false;
        }
        cancelSent = true;
        return true;
    }

    /**
     * SinkCancelAck arrived: the source dropped every advertisement (an RdmaWrCompl it sent before
     * came first).
     *
     * @return 0, or {@link #NOT_OUTSTANDING} when no cancel was sent (a violation)
     */
    int onCancelAck() {
        if (!cancelSent) {
            return NOT_OUTSTANDING;
        }
        cancelSent = false;
        if (state == ADVERTISED) {
            state = IDLE;
            voided++;
        }
        return 0;
    }

    /**
     * Whether the peer may no longer write the buffer last advertised.
     *
     * @return true when nothing is advertised and no cancel is unanswered
     */
    boolean bufferFree() {
        return state == IDLE && !cancelSent;
    }

    /**
     * Whether an advertisement is out and not void.
     *
     * @return true while the source may write into the buffer
     */
    boolean advertised() {
        return state == ADVERTISED;
    }

    /**
     * Bytes the peer wrote into advertised buffers.
     *
     * @return the count
     */
    long written() {
        return written;
    }

    /**
     * Advertisements voided by a stream message or a cancel.
     *
     * @return the count
     */
    long voided() {
        return voided;
    }

    String describe() {
        return "sinkAvail=" + (state == ADVERTISED ? "ADVERTISED " + advertBytes : "IDLE") + (cancelSent ? " cancelSent" : "")
            + " written=" + written + " voided=" + voided;
    }
}
