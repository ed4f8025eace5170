package io.jsdp.zcopy;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;

/**
 * The data source's side of SrcAvail zero copy, one advertisement at a time (the specification's
 * combined mode; {@code docs/protocol.md} section 9): register the writer's buffer, advertise it with
 * its first bytes inline, count the sink's RdmaRdCompl reports until the whole buffer is read; on SendSm
 * hand the rest back to buffer copy; on timeout send SrcAvailCancel, and reset the connection if even
 * that is not answered. Runs under the connection's lock.
 */
final class SrcAvailSender {
    enum State { IDLE, WAIT_POST, ADVERTISED, CANCEL_PENDING, CANCEL_SENT, DONE, FALLBACK }

    /** The most one advertisement covers; a longer write takes several. */
    static final int MAX_ADVERT_BYTES = 16 << 20;

    private final ZeroCopy zc;
    private final LargeTransfers.Port port;
    private State state = State.IDLE;
    private ByteBuffer buffer;
    private int start;
    private int len;
    private int inline;
    private long acked;
    private int mseq;
    /** The mseq of the last SrcAvail sent, for stale-message checks after it ended; -1 before any. */
    private int lastMseq = -1;
    private boolean anySent;
    private RegistrationCache.Entry reg;
    private ScheduledFuture<?> timer;
    /** The sink refused this buffer: its rest goes by buffer copy. */
    private ByteBuffer declined;
    private long transfers;
    private long rdmaBytes;
    private long fallbacks;
    private long cancels;

    SrcAvailSender(ZeroCopy zc, LargeTransfers.Port port) {
        this.zc = zc;
        this.port = port;
    }

    int write(ByteBuffer src) {
        switch (state) {
            case WAIT_POST, ADVERTISED, CANCEL_PENDING, CANCEL_SENT -> {
                return 0; // one advertisement at a time; everything else waits behind it (stream order)
            }
            case DONE, FALLBACK -> {
                boolean fallback = state == State.FALLBACK;
                int n = (int) acked;
                ByteBuffer b = buffer;
                int at = start;
                endTransfer();
                if (src == b && src.position() == at) {
                    src.position(at + n);
                    if (fallback) {
                        declined = src;
                    } else if (src.remaining() >= port.options().zcopyThreshold()) {
                        start(src); // a buffer longer than one advertisement: the next part
                    }
                    return n;
                }
                // the writer broke the contract (another buffer): the finished transfer is its business
            }
            default -> {
                // IDLE
            }
        }
        if (src == declined) {
            return 0; // the engine copies the rest
        }
        declined = null;
        if (!zc.isDeviceMemory(src)) {
            return 0; // a peer in another process could not reach it
        }
        start(src);
        return 0;
    }

    private void start(ByteBuffer src) {
        int maxInline = Math.min(zc.settings().inlineBytes(), port.maxSrcAvailInline());
        int length = Math.min(src.remaining(), MAX_ADVERT_BYTES);
        if (maxInline < 0 || length <= 1) {
            return;
        }
        RegistrationCache.Entry e = zc.acquire(src);
        if (e == null) {
            return; // not registered: the engine copies
        }
        reg = e;
        buffer = src;
        start = src.position();
        len = length;
        inline = Math.min(maxInline, length - 1); // at least one byte by RDMA: the sink always reports
        acked = inline;
        state = State.WAIT_POST;
        transmit();
    }

    boolean holdsOutput() {
        return state == State.WAIT_POST || state == State.ADVERTISED || state == State.CANCEL_PENDING
            || state == State.CANCEL_SENT;
    }

    boolean hasPendingOutput() {
        return state == State.WAIT_POST || state == State.CANCEL_PENDING;
    }

    void transmit() {
        if (state == State.WAIT_POST && port.outputDrained()) {
            int m = port.postSrcAvail(buffer, inline, len, reg.region.rkey(), reg.region.address() + start);
            if (m >= 0) {
                mseq = m;
                lastMseq = m;
                anySent = true;
                state = State.ADVERTISED;
                timer = port.schedule(this::onAdvertTimeout, zc.settings().srcAvailTimeoutNs());
            }
        }
        if (state == State.CANCEL_PENDING && port.postControl(MessageId.SRC_AVAIL_CANCEL, 0)) {
            state = State.CANCEL_SENT;
            cancels++;
            timer = port.schedule(this::onCancelTimeout, zc.settings().cancelTimeoutNs());
        }
    }

    private boolean outstanding() {
        return state == State.ADVERTISED || state == State.CANCEL_PENDING || state == State.CANCEL_SENT;
    }

    /** RdmaRdCompl: {@code size} more bytes of the outstanding advertisement were read. */
    void onReadCompletion(long size, int mseqAck) {
        if (!outstanding() || mseqAck - mseq < 0) {
            if (anySent && mseqAck - lastMseq < 0) {
                return; // stale: sent before the sink saw our latest SrcAvail (C.9)
            }
            port.violation(Violation.RD_COMPL_OVERRUN, "RdmaRdCompl of " + size + " bytes (mseq_ack " + mseqAck
                + ") with no SrcAvail outstanding (last " + (anySent ? "mseq " + lastMseq : "none") + ", state " + state + ")");
            return;
        }
        if (acked + size > len) {
            port.violation(Violation.RD_COMPL_OVERRUN, "RdmaRdCompl of " + size + " bytes after " + acked + " of the "
                + len + " advertised by SrcAvail mseq " + mseq);
            return;
        }
        acked += size;
        rdmaBytes += size;
        if (acked == len) {
            finish(State.DONE);
            transfers++;
        }
    }

    /** SendSm: the sink takes no more by RDMA; the rest goes by buffer copy. */
    void onSendSm(int mseqAck) {
        if (!outstanding() || mseqAck - mseq < 0) {
            return; // stale, or answers an advertisement that ended
        }
        fallbacks++;
        finish(State.FALLBACK);
    }

    private void finish(State to) {
        state = to;
        cancelTimer();
        releaseRegistration(); // the sink reads no more of it
    }

    private void onAdvertTimeout() {
        if (state == State.ADVERTISED) {
            state = State.CANCEL_PENDING;
            transmit();
        }
    }

    private void onCancelTimeout() {
        if (state == State.CANCEL_SENT) {
            port.fail("zcopy.CANCEL_TIMEOUT", "no RdmaRdCompl or SendSm within "
                + zc.settings().cancelTimeoutNs() / 1_000_000 + " ms of SrcAvailCancel for SrcAvail mseq " + mseq
                + " (" + acked + " of " + len + " bytes read)");
        }
    }

    private void endTransfer() {
        state = State.IDLE;
        buffer = null;
        cancelTimer();
        releaseRegistration();
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    private void releaseRegistration() {
        if (reg != null) {
            zc.release(reg);
            reg = null;
        }
    }

    void release() {
        cancelTimer();
        releaseRegistration();
        buffer = null;
        declined = null;
    }

    long transfers() {
        return transfers;
    }

    long rdmaBytes() {
        return rdmaBytes;
    }

    String describe() {
        return "source " + state + (outstanding() || state == State.WAIT_POST ? " " + acked + "/" + len + " mseq " + mseq : "")
            + " transfers=" + transfers + " fallbacks=" + fallbacks + " cancels=" + cancels + " rdmaBytes=" + rdmaBytes;
    }
}
