package io.jsdp.zcopy;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.Access;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;

/**
 * The data sink's side of SinkAvail zero copy ({@code docs/protocol.md} section 9): a blocking reader
 * that finds nothing to read advertises its buffer (device memory, at least the threshold remaining,
 * registered for remote write) with one SinkAvail; the peer RDMA-writes the next bytes of the stream
 * into it and retires it with RdmaWrCompl, whose bytes the reader then takes. A stream message or the
 * peer's DisConn voids the advertisement (the peer will never write it, {@link SinkAvailSender}); a
 * reader that leaves earlier withdraws it with SinkAvailCancel and waits for SinkCancelAck, which must
 * come within {@code jsdp.zcopy.cancelTimeoutMs} of the moment the cancel became due — also when no
 * credit lets the cancel itself go — or the connection is reset. Runs under the connection's lock;
 * allocates nothing on the data path.
 */
final class SinkAvailReader {
    private static final byte NONE = 0;
    /** Booked, the SinkAvail waits for credits. */
    private static final byte WAIT_POST = 1;
    /** The SinkAvail went: the peer may write the buffer. */
    private static final byte ADVERTISED = 2;

    private final ZeroCopy zc;
    private final LargeTransfers.Port port;
    private final SinkAvailSender books = new SinkAvailSender();
    private byte state = NONE;
    /** The advertised buffer, from its position {@link #start}; kept until the written bytes are taken. */
    private ByteBuffer buffer;
    private int start;
    private int size;
    private RegistrationCache.Entry reg;
    /** Bytes the peer wrote (RdmaWrCompl) and how many of them the reader took. */
    private int written;
    private int taken;
    /** The reader leaves: a SinkAvailCancel must go (credits); the cancel timer runs from then on. */
    private boolean cancelDue;
    private ScheduledFuture<?> cancelTimer;
    /** The input is shut: what the peer still writes is dropped. */
    private boolean discarding;
    private boolean peerOutputEnded;
    private long adverts;
    private long writes;
    private long rdmaBytes;
    private long cancels;

    SinkAvailReader(ZeroCopy zc, LargeTransfers.Port port) {
        this.zc = zc;
        this.port = port;
    }

    /** The blocked reader found nothing to read: advertise {@code dst} when it qualifies. */
    void advertise(ByteBuffer dst) {
        if (state != NONE || written > 0 || discarding || peerOutputEnded || !books.bufferFree()) {
            return;
        }
        int threshold = port.options().zcopyThreshold();
        if (threshold == 0 || !dst.isDirect() || dst.isReadOnly() || dst.remaining() < threshold || !zc.isDeviceMemory(dst)) {
            return; // the peer can reach only the stack's device memory, across processes too
        }
        RegistrationCache.Entry e = zc.acquire(dst, Access.REMOTE_WRITE); // dropped once the advertisement ends
        if (e == null) {
            return;
        }
        reg = e;
        buffer = dst;
        start = dst.position();
        size = dst.remaining();
        state = WAIT_POST;
        transmit();
    }

    boolean hasPendingOutput() {
        return state == WAIT_POST || cancelDue;
    }

    void transmit() {
        if (state == WAIT_POST) {
            int nonDisc = books.advertise(size);
            if (port.postSinkAvail(size, reg.region.rkey(), reg.region.address() + start, nonDisc) >= 0) {
                state = ADVERTISED;
                adverts++;
            } else {
                books.withdrawUnsent();
            }
        }
        if (cancelDue) {
            if (state != ADVERTISED) {
                cancelDue = false; // written or voided meanwhile: nothing to cancel
                cancelTimer();
            } else if (books.cancelOutstanding()) {
                cancelDue = false; // one went already: its timer runs
            } else if (port.postControl(MessageId.SINK_AVAIL_CANCEL, 0) >= 0) {
                cancelDue = false;
                books.cancel();
                cancels++; // the timer started when the cancel became due goes on: it bounds the wait for credits too
            }
        }
    }

    /** The reader leaves or the input ends with the buffer advertised: the cancel is due, and the timer starts now. */
    private void cancelBecomesDue() {
        cancelDue = true;
        if (cancelTimer == null) {
            cancelTimer = port.schedule(this::onCancelTimeout, zc.settings().cancelTimeoutNs());
        }
        transmit();
    }

    /**
     * Moves bytes the peer wrote into {@code dst}: the advertised buffer itself (its position advances
     * over them) or, when the reader came back with another one, a copy.
     */
    int take(ByteBuffer dst) {
        if (written == 0) {
            return 0;
        }
        int n = Math.min(written - taken, dst.remaining());
        int from = start + taken;
        if (dst != buffer || dst.position() != from) {
            dst.put(dst.position(), buffer, from, n);
        }
        dst.position(dst.position() + n);
        taken += n;
        if (taken == written) {
            written = 0;
            taken = 0;
            drop();
        }
        return n;
    }

    int writtenBytes() {
        return written - taken;
    }

    /** The reader leaves without data: cancel the advertisement and report until the peer answered. */
    int withdraw(ByteBuffer dst) {
        if (written > 0) {
            return take(dst);
        }
        if (state == WAIT_POST) {
            state = NONE; // never sent
            drop();
            return 0;
        }
        if (state != ADVERTISED) {
            return 0;
        }
        if (!books.cancelOutstanding() && !cancelDue) {
            cancelBecomesDue();
        }
        return LargeTransfers.IN_PROGRESS;
    }

    boolean bufferOut() {
        return state == ADVERTISED;
    }

    /** A stream message arrived: it counts, and the source will never write the advertised buffer. */
    void onStreamMessage() {
        books.onStreamMessage();
        if (state != NONE) {
            state = NONE; // void, or never sent
            cancelDue = false;
            drop();
        }
        if (!books.cancelOutstanding()) {
            cancelTimer(); // a cancel that never went is not needed any more
        }
    }

    void onPeerOutputEnded() {
        peerOutputEnded = true;
        books.onPeerOutputEnded();
        cancelTimer();
        if (state != NONE) {
            state = NONE;
            cancelDue = false;
            drop();
        }
    }

    /** RdmaWrCompl: the peer wrote {@code size} bytes at the start of the advertised buffer. */
    void onWriteCompletion(long size) {
        int n = books.onWriteCompletion(size);
        if (n == SinkAvailSender.NOT_OUTSTANDING) {
            port.violation(Violation.WR_COMPL_OVERRUN, "RdmaWrCompl of " + size + " bytes with no SinkAvail outstanding");
            return;
        }
        if (n == SinkAvailSender.OVERRUN) {
            port.violation(Violation.WR_COMPL_OVERRUN, "RdmaWrCompl of " + size + " bytes for a SinkAvail of " + this.size
                + " bytes");
            return;
        }
        state = NONE;
        cancelDue = false;
        if (!books.cancelOutstanding()) {
            cancelTimer(); // a cancel that never went is not needed any more
        }
        writes++;
        rdmaBytes += n;
        if (discarding) {
            drop();
            return;
        }
        written = n;
        taken = 0;
    }

    /** SinkCancelAck: the peer dropped the advertisement (an RdmaWrCompl it sent before came first). */
    void onCancelAck() {
        if (books.onCancelAck() == SinkAvailSender.NOT_OUTSTANDING) {
            if (peerOutputEnded) {
                return; // the cancel was settled by the peer's DisConn; its answer may still come
            }
            port.violation(Violation.CANCEL_ACK_WITHOUT_CANCEL, "SinkCancelAck with no SinkAvailCancel outstanding");
            return;
        }
        cancelTimer();
        if (state == ADVERTISED) {
            state = NONE;
            drop();
        }
    }

    /** The input is shut or the connection fails: drop written bytes, withdraw the advertisement. */
    void discardIncoming() {
        discarding = true;
        if (written > 0) {
            written = 0;
            taken = 0;
            drop();
        }
        if (state == WAIT_POST) {
            state = NONE;
            drop();
        } else if (state == ADVERTISED && !books.cancelOutstanding() && !cancelDue) {
            cancelBecomesDue();
        }
    }

    private void onCancelTimeout() {
        cancelTimer = null;
        if (cancelDue && state == ADVERTISED) {
            port.fail("zcopy.CANCEL_TIMEOUT", "no SinkCancelAck or RdmaWrCompl within "
                + zc.settings().cancelTimeoutNs() / 1_000_000 + " ms of the SinkAvailCancel falling due, which no credit let go,"
                + " for a SinkAvail of " + size + " bytes");
        } else if (books.cancelOutstanding()) {
            port.fail("zcopy.CANCEL_TIMEOUT", "no SinkCancelAck or RdmaWrCompl within "
                + zc.settings().cancelTimeoutNs() / 1_000_000 + " ms of SinkAvailCancel for a SinkAvail of " + size + " bytes");
        }
    }

    private void cancelTimer() {
        if (cancelTimer != null) {
            cancelTimer.cancel(false);
            cancelTimer = null;
        }
    }

    /** The peer writes the buffer no more and the reader took its bytes: release the registration. */
    private void drop() {
        if (reg != null) {
            zc.release(reg);
            reg = null;
        }
        buffer = null;
    }

    void release() {
        cancelTimer();
        state = NONE;
        written = 0;
        taken = 0;
        drop();
    }

    long rdmaBytes() {
        return rdmaBytes;
    }

    String describe() {
        return "sinkAvail reader " + (state == ADVERTISED ? "ADVERTISED " + size : state == WAIT_POST ? "WAIT_POST " + size : "IDLE")
            + " written=" + (written - taken) + " adverts=" + adverts + " writes=" + writes + " sinkCancels=" + cancels + " "
            + books.describe();
    }
}
