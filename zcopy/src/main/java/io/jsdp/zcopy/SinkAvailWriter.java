package io.jsdp.zcopy;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;

/**
 * The data source's side of SinkAvail zero copy ({@code docs/protocol.md} section 9): the peer's
 * reader advertised its buffer ({@link SinkAvailReceiver} keeps the pending ones and drops stale ones);
 * while everything written before is on the wire, the next blocking write of a direct buffer
 * RDMA-WRITEs up to the advertised size into it, posts RdmaWrCompl right behind the WRITE (queue-pair
 * order puts the bytes first), and returns once the WRITE completed — the writer's buffer is its own
 * again. SinkAvailCancel drops every pending advertisement and is answered with SinkCancelAck. Runs
 * under the connection's lock; allocates nothing on the data path.
 */
final class SinkAvailWriter {
    /** Tags of our RDMA WRITEs: above the 32 bits of the SrcAvail sink's READ tags. */
    static final long WRITE_TAG = 1L << 32;

    private static final byte IDLE = 0;
    /** Registered, the WRITE and its RdmaWrCompl wait for credits. */
    private static final byte WAIT_POST = 1;
    /** The WRITE and RdmaWrCompl are posted; the WRITE has not completed. */
    private static final byte POSTED = 2;
    /** The WRITE completed: the writer's next call takes the bytes. */
    private static final byte DONE = 3;

    private final ZeroCopy zc;
    private final LargeTransfers.Port port;
    private final SinkAvailReceiver books;
    private byte state = IDLE;
    private ByteBuffer buffer;
    private int start;
    private int len;
    private RegistrationCache.Entry reg;
    private long tag;
    private long remoteAddress;
    private int remoteKey;
    private long transfers;
    private long rdmaBytes;
    private long adverts;
    private long acks;

    SinkAvailWriter(ZeroCopy zc, LargeTransfers.Port port, int maxPending) {
        this.zc = zc;
        this.port = port;
        this.books = new SinkAvailReceiver(maxPending);
    }

    boolean usable() {
        return books.usable();
    }

    /** A write of ours is under way or done and not yet taken by the writer. */
    boolean busy() {
        return state != IDLE;
    }

    boolean holdsOutput() {
        return state == WAIT_POST || state == POSTED;
    }

    /**
     * Whether the engine must keep its queue armed for every completion: a WRITE or a SinkCancelAck waits
     * for credits. The peer's SinkAvailCancel, which must be answered while our application makes no call
     * (or the peer's reader waits for {@code jsdp.zcopy.cancelTimeoutMs} and resets), comes as a solicited
     * event instead (the engine arms for solicited events once the application makes no call): keeping
     * the queue armed for everything woke the progress thread at every completion and, on 2 CPUs busy
     * computing, tripled the progress test's iterations at 400 µs and more of computation.
     */
    boolean hasPendingOutput() {
        return state == WAIT_POST || books.ackDue();
    }

    /** A WRITE waits for credits or runs, or a SinkCancelAck is owed. */
    boolean hasUndeliveredOutput() {
        return holdsOutput() || books.ackDue();
    }

    /**
     * Starts writing {@code src} into the oldest pending advertisement.
     *
     * @return true when started (the engine waits: {@link #holdsOutput()}); false when {@code src} goes
     *     another way
     */
    boolean start(ByteBuffer src) {
        if (state != IDLE || !books.usable() || !port.outputDrained() || !src.isDirect()
            || src.remaining() < Math.min(books.headBytes(), SrcAvailReceiver.MIN_READ_BYTES)) {
            return false; // a small write costs less as a copy; its Data voids the advertisement
        }
        RegistrationCache.Entry e = zc.acquire(src, 0); // the source of our WRITE: no remote access
        if (e == null) {
            return false;
        }
        reg = e;
        buffer = src;
        start = src.position();
        len = Math.min(src.remaining(), books.headBytes());
        state = WAIT_POST;
        transmit();
        return true;
    }

    /**
     * The writer calls again: the bytes of a completed WRITE are its; 0 while the WRITE runs. A writer
     * that broke the contract (another buffer, or a moved position) gets 0: what it counts must be what
     * its buffer's position advanced over, as {@link SrcAvailSender} does.
     */
    int write(ByteBuffer src) {
        if (state != DONE) {
            return 0;
        }
        int n = 0;
        if (src == buffer && src.position() == start) {
            n = len;
            src.position(start + n);
        }
        clear();
        return n;
    }

    /** A completed WRITE not yet taken by the writer. */
    boolean done() {
        return state == DONE;
    }

    void transmit() {
        if (state == WAIT_POST) {
            if (!books.usable()) {
                clear(); // cancelled meanwhile: the writer copies instead
            } else {
                tag = WRITE_TAG | (tag + 1 & 0xFFFF_FFFFL);
                remoteAddress = books.headAddress();
                remoteKey = books.headRkey();
                if (port.postRdmaWrite(tag, reg.region.address() + start, reg.region.lkey(), len, remoteAddress, remoteKey) >= 0) {
                    books.retireHead(len);
                    state = POSTED;
                }
            }
        }
        if (books.ackDue() && port.postControl(MessageId.SINK_CANCEL_ACK, 0) >= 0) {
            books.ackSent();
            acks++;
        }
    }

    void onSinkAvail(long size, int rkey, long addr, int nonDisc) {
        int r = books.onSinkAvail(size, rkey, addr, nonDisc);
        if (r == SinkAvailReceiver.BAD) {
            port.violation(Violation.BAD_SINK_AVAIL, "SinkAvail of " + size + " bytes with non_disc " + Integer.toUnsignedString(nonDisc)
                + " (stream messages sent: " + Integer.toUnsignedString(books.streamMessagesSent()) + ")");
        } else if (r == SinkAvailReceiver.TOO_MANY) {
            port.violation(Violation.TOO_MANY_ADVERTS, "SinkAvail while " + books.pending()
                + " are pending (max_adverts " + SrcAvailReceiver.MAX_ADVERTS + ")");
        } else if (r == SinkAvailReceiver.ACCEPTED) {
            adverts++;
        }
    }

    void onStreamMessageSent() {
        books.onStreamMessageSent();
    }

    /** SinkAvailCancel: drop what is pending (a write already posted went before) and answer. */
    void onCancel() {
        books.onCancel();
        transmit();
    }

    /** A completion of our RDMA WRITE. */
    boolean onCompletion(long completionTag, WorkCompletion wc) {
        if (state != POSTED || completionTag != tag) {
            return wc.isSuccess(); // not ours any more (the connection failed meanwhile)
        }
        if (wc.isSuccess()) {
            state = DONE;
            transfers++;
            rdmaBytes += len;
            releaseRegistration(); // the device read the writer's buffer
            return true;
        }
        WcStatus s = wc.status();
        if (s != WcStatus.REM_ACCESS_ERR && s != WcStatus.REM_INV_REQ_ERR) {
            return false; // flushed, peer gone, transport retries: the engine's own failure path
        }
        port.violation(Violation.BAD_SINK_AVAIL, "RDMA WRITE of " + len + " bytes at addr 0x" + Long.toHexString(remoteAddress)
            + " rkey 0x" + Integer.toHexString(remoteKey) + " into the peer's SinkAvail completed with " + s);
        return true;
    }

    private void releaseRegistration() {
        if (reg != null) {
            zc.release(reg);
            reg = null;
        }
    }

    private void clear() {
        releaseRegistration();
        buffer = null;
        state = IDLE;
    }

    void release() {
        clear();
    }

    long transfers() {
        return transfers;
    }

    long rdmaBytes() {
        return rdmaBytes;
    }

    String describe() {
        return "sinkAvail writer " + switch (state) {
            case WAIT_POST -> "WAIT_POST " + len;
            case POSTED -> "POSTED " + len;
            case DONE -> "DONE " + len;
            default -> "IDLE";
        } + " peerAdverts=" + adverts + " sinkWrites=" + transfers + " cancelAcks=" + acks + " " + books.describe();
    }
}
