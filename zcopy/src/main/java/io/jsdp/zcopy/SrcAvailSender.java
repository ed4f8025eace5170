package io.jsdp.zcopy;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.Access;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;

/**
 * The data source's side of SrcAvail zero copy ({@code docs/protocol.md} section 9): register the
 * writer's buffers, advertise them with their first bytes inline — a gathering write several at once,
 * up to the peer's {@code max_adverts} (asynchronous zero copy) — and count the sink's RdmaRdCompl
 * reports, oldest advertisement first, until each buffer is read. SendSm ends the oldest outstanding
 * one (its rest goes by buffer copy) and voids every later one (the sink discards them; their bytes
 * go by buffer copy too). An advertisement not read in time is cancelled with SrcAvailCancel, and the
 * connection reset if even that is not answered. Runs under the connection's lock.
 */
final class SrcAvailSender {
    /** The most one advertisement covers; a longer buffer takes several in turn. */
    static final int MAX_ADVERT_BYTES = 16 << 20;
    /** The most advertisements outstanding on one connection, whatever the peer accepts. */
    static final int MAX_PIPELINE = 8;

    private static final byte WAIT_POST = 1;
    private static final byte ADVERTISED = 2;
    private static final byte DONE = 3;
    private static final byte FALLBACK = 4;
    private static final byte VOID = 5;

    private static final byte CANCEL_NONE = 0;
    private static final byte CANCEL_PENDING = 1;
    private static final byte CANCEL_SENT = 2;

    private static final class Transfer {
        ByteBuffer buffer;
        int start;
        int len;
        int inline;
        long acked;
        int mseq;
        /** When its SrcAvail was posted. */
        long postNs;
        byte state;
        RegistrationCache.Entry reg;
    }

    private final ZeroCopy zc;
    private final LargeTransfers.Port port;
    private final Transfer[] ring = new Transfer[MAX_PIPELINE];
    private long head;
    private long tail;
    private final ByteBuffer[] one = new ByteBuffer[1];
    /** Cancellation of the oldest outstanding advertisement, whose mseq the timer watches. */
    private byte cancel = CANCEL_NONE;
    private int timedMseq;
    private ScheduledFuture<?> timer;
    /** The mseq of the last SrcAvail sent, for stale-message checks; valid when {@link #anySent}. */
    private int lastMseq;
    private boolean anySent;
    /** The sink refused this buffer: its rest goes by buffer copy. */
    private ByteBuffer declined;
    private long transfers;
    private long rdmaBytes;
    private long fallbacks;
    private long cancels;
    private int maxInFlight;
    /** Samples: nanoseconds per MiB from a SrcAvail's post to its last RdmaRdCompl. */
    private final SpinAdvisor spin = new SpinAdvisor();

    SrcAvailSender(ZeroCopy zc, LargeTransfers.Port port) {
        this.zc = zc;
        this.port = port;
        for (int i = 0; i < MAX_PIPELINE; i++) {
            ring[i] = new Transfer();
        }
    }

    private Transfer at(long i) {
        return ring[(int) (i % MAX_PIPELINE)];
    }

    int write(ByteBuffer src) {
        one[0] = src;
        try {
            return (int) write(one, 0, 1);
        } finally {
            one[0] = null;
        }
    }

    long write(ByteBuffer[] srcs, int offset, int length) {
        long total = settle(srcs, offset, length);
        if (head != tail) {
            return total; // still outstanding: nothing else may go (stream order)
        }
        int end = offset + length;
        int i = offset; // buffers finished by settle have nothing remaining: the loop below skips them
        // start advertising the run of eligible buffers that follows
        int threshold = port.options().zcopyThreshold();
        int max = Math.min(MAX_PIPELINE, Math.max(1, port.peerMaxAdverts()));
        while (i < end && tail - head < max) {
            ByteBuffer b = srcs[i];
            if (!b.hasRemaining()) {
                i++;
                continue;
            }
            if (b == declined) {
                break;
            }
            declined = null;
            if (threshold == 0 || !b.isDirect() || b.remaining() < threshold || !zc.isDeviceMemory(b) || !start(b)) {
                break; // copied, after what is outstanding
            }
            if (b.remaining() > MAX_ADVERT_BYTES) {
                break; // its next part after this one
            }
            i++;
        }
        if (head != tail) {
            transmit();
        }
        return total;
    }

    /**
     * Takes what the peer is done with, in order: positions advance over acknowledged advertisements;
     * nothing new is started. After a refusal (SendSm) the rest of that buffer is left to the copy.
     *
     * @return bytes finished
     */
    long settle(ByteBuffer[] srcs, int offset, int length) {
        int end = offset + length;
        int i = offset;
        long total = 0;
        while (head != tail) {
            Transfer t = at(head);
            if (t.state == WAIT_POST || t.state == ADVERTISED) {
                return total; // still outstanding
            }
            if (t.state == VOID) {
                clear(t);
                head++;
                continue;
            }
            while (i < end && !srcs[i].hasRemaining()) {
                i++;
            }
            if (i == end || srcs[i] != t.buffer || srcs[i].position() != t.start) {
                // the writer broke the contract (another buffer): its finished transfers are its business
                while (head != tail) {
                    clear(at(head++));
                }
                return total;
            }
            srcs[i].position(t.start + (int) t.acked);
            total += t.acked;
            boolean fellBack = t.state == FALLBACK;
            clear(t);
            head++;
            if (fellBack) {
                declined = srcs[i];
                while (head != tail) {
                    clear(at(head++)); // voided by the SendSm
                }
                return total; // the engine copies the rest
            }
        }
        return total;
    }

    /** Registers {@code b} and queues its advertisement; false when it cannot be advertised. */
    private boolean start(ByteBuffer b) {
        int maxInline = Math.min(zc.settings().inlineBytes(), port.maxSrcAvailInline());
        int length = Math.min(b.remaining(), MAX_ADVERT_BYTES);
        if (maxInline < 0 || length <= 1) {
            return false;
        }
        RegistrationCache.Entry e = zc.acquire(b, Access.REMOTE_READ); // the peer reads it, never writes it
        if (e == null) {
            return false; // not registered: the engine copies
        }
        Transfer t = at(tail++);
        t.reg = e;
        t.buffer = b;
        t.start = b.position();
        t.len = length;
        t.inline = Math.min(maxInline, length - 1); // at least one byte by RDMA: the sink always reports
        t.acked = t.inline;
        t.state = WAIT_POST;
        return true;
    }

    boolean hasUnsettled() {
        return head != tail;
    }

    boolean holdsOutput() {
        for (long i = head; i < tail; i++) {
            byte s = at(i).state;
            if (s == WAIT_POST || s == ADVERTISED) {
                return true;
            }
        }
        return false;
    }

    boolean hasPendingOutput() {
        if (cancel == CANCEL_PENDING) {
            return true;
        }
        for (long i = head; i < tail; i++) {
            if (at(i).state == WAIT_POST) {
                return true;
            }
        }
        return false;
    }

    void transmit() {
        for (long i = head; i < tail; i++) {
            Transfer t = at(i);
            if (t.state != WAIT_POST) {
                continue;
            }
            if (!port.outputDrained()) {
                break;
            }
            int m = port.postSrcAvail(t.buffer, t.inline, t.len, t.reg.region.rkey(), t.reg.region.address() + t.start);
            if (m < 0) {
                break;
            }
            t.mseq = m;
            t.postNs = System.nanoTime();
            t.state = ADVERTISED;
            lastMseq = m;
            anySent = true;
            maxInFlight = (int) Math.max(maxInFlight, outstandingCount());
        }
        watchOldest();
        if (cancel == CANCEL_PENDING && port.postControl(MessageId.SRC_AVAIL_CANCEL, 0) >= 0) {
            cancel = CANCEL_SENT;
            cancels++;
            cancelTimer();
            int m = timedMseq;
            timer = port.schedule(() -> onCancelTimeout(m), zc.settings().cancelTimeoutNs());
        }
    }

    private long outstandingCount() {
        long n = 0;
        for (long i = head; i < tail; i++) {
            if (at(i).state == ADVERTISED) {
                n++;
            }
        }
        return n;
    }

    /** The oldest advertisement on the wire, or null. */
    private Transfer oldestOutstanding() {
        for (long i = head; i < tail; i++) {
            Transfer t = at(i);
            if (t.state == ADVERTISED) {
                return t;
            }
            if (t.state == WAIT_POST) {
                return null;
            }
        }
        return null;
    }

    /** Keeps the advertisement timer on the oldest outstanding advertisement. */
    private void watchOldest() {
        Transfer t = oldestOutstanding();
        if (t == null) {
            if (cancel == CANCEL_NONE) {
                cancelTimer();
            }
            return;
        }
        if (timer != null && timedMseq == t.mseq || cancel != CANCEL_NONE) {
            return; // watched already, or our cancel is going out or its answer is due
        }
        cancelTimer();
        cancel = CANCEL_NONE;
        timedMseq = t.mseq;
        int m = t.mseq;
        timer = port.schedule(() -> onAdvertTimeout(m), zc.settings().srcAvailTimeoutNs());
    }

    /** RdmaRdCompl: {@code size} more bytes of the oldest outstanding advertisement were read. */
    void onReadCompletion(long size, int mseqAck) {
        Transfer t = oldestOutstanding();
        if (t == null || mseqAck - t.mseq < 0) {
            if (anySent && mseqAck - lastMseq < 0 && (t == null || mseqAck - t.mseq < 0)) {
                return; // stale: sent before the sink saw the advertisement it would apply to (C.9)
            }
            port.violation(Violation.RD_COMPL_OVERRUN, "RdmaRdCompl of " + size + " bytes (mseq_ack " + mseqAck
                + ") with no SrcAvail outstanding (last " + (anySent ? "mseq " + lastMseq : "none") + ")");
            return;
        }
        if (t.acked + size > t.len) {
            port.violation(Violation.RD_COMPL_OVERRUN, "RdmaRdCompl of " + size + " bytes after " + t.acked + " of the "
                + t.len + " advertised by SrcAvail mseq " + t.mseq);
            return;
        }
        t.acked += size;
        rdmaBytes += size;
        if (t.acked == t.len) {
            long now = System.nanoTime();
            spin.learn((long) ((double) (now - t.postNs) * (1 << 20) / (t.len - t.inline)));
            spin.onEvent(now);
            t.state = DONE;
            transfers++;
            release(t);
            if (cancel == CANCEL_SENT && timedMseq == t.mseq) {
                cancel = CANCEL_NONE; // our last report crossed the cancel: the transfer is complete
                cancelTimer();
            }
            watchOldest();
        }
    }

    /**
     * A writer held by the outstanding advertisements: poll until twice the time they should take at
     * the recent rate, counted from the oldest one's post ({@link SpinAdvisor}).
     */
    long spinHintNs(long nowNs) {
        long bytes = 0;
        long from = nowNs;
        boolean first = true;
        for (long i = head; i < tail; i++) {
            Transfer t = at(i);
            if (t.state == ADVERTISED || t.state == WAIT_POST) {
                bytes += t.len - t.acked;
                if (first && t.state == ADVERTISED) {
                    from = t.postNs;
                }
                first = false;
            }
        }
        if (bytes == 0) {
            return 0;
        }
        long expected = from + 2 * (long) ((double) spin.average() * bytes / (1 << 20));
        return spin.advise(nowNs, expected, port.options().spinNs(), zc.settings().spinMaxNs());
    }

    /** SendSm: the sink takes no more of the oldest outstanding advertisement, and discards the later ones. */
    void onSendSm(int mseqAck) {
        Transfer t = oldestOutstanding();
        if (t == null || mseqAck - t.mseq < 0) {
            return; // stale, or answers an advertisement that ended
        }
        fallbacks++;
        t.state = FALLBACK;
        release(t);
        for (long i = head; i < tail; i++) {
            Transfer u = at(i);
            if (u != t && (u.state == ADVERTISED || u.state == WAIT_POST) && (u.state == WAIT_POST || u.mseq - t.mseq > 0)) {
                u.state = VOID;
                release(u);
            }
        }
        cancel = CANCEL_NONE;
        cancelTimer();
    }

    private void onAdvertTimeout(int mseq) {
        Transfer t = oldestOutstanding();
        if (t != null && t.mseq == mseq && cancel == CANCEL_NONE) {
            cancel = CANCEL_PENDING;
            timer = null;
            transmit();
        }
    }

    private void onCancelTimeout(int mseq) {
        Transfer t = oldestOutstanding();
        if (cancel == CANCEL_SENT && t != null && t.mseq == mseq) {
            port.fail("zcopy.CANCEL_TIMEOUT", "no RdmaRdCompl or SendSm within "
                + zc.settings().cancelTimeoutNs() / 1_000_000 + " ms of SrcAvailCancel for SrcAvail mseq " + mseq
                + " (" + t.acked + " of " + t.len + " bytes read)");
        }
    }

    private void release(Transfer t) {
        if (t.reg != null) {
            zc.release(t.reg); // the sink reads no more of it
            t.reg = null;
        }
    }

    private void clear(Transfer t) {
        release(t);
        t.buffer = null;
        t.state = 0;
    }

    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    void release() {
        cancelTimer();
        while (head != tail) {
            clear(at(head++));
        }
        declined = null;
    }

    long transfers() {
        return transfers;
    }

    long rdmaBytes() {
        return rdmaBytes;
    }

    String describe() {
        StringBuilder b = new StringBuilder("source");
        for (long i = head; i < tail; i++) {
            Transfer t = at(i);
            b.append(' ').append(switch (t.state) {
                case WAIT_POST -> "WAIT_POST";
                case ADVERTISED -> "ADVERTISED";
                case DONE -> "DONE";
                case FALLBACK -> "FALLBACK";
                case VOID -> "VOID";
                default -> "?";
            }).append(' ').append(t.acked).append('/').append(t.len).append(" mseq ").append(t.mseq);
        }
        if (head == tail) {
            b.append(" IDLE");
        }
        return b.append(" cancel=").append(cancel).append(" transfers=").append(transfers).append(" fallbacks=")
            .append(fallbacks).append(" cancels=").append(cancels).append(" maxInFlight=").append(maxInFlight)
            .append(" rdmaBytes=").append(rdmaBytes).append(" spin ").append(spin.describe()).toString();
    }
}
