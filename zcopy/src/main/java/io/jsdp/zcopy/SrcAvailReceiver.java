package io.jsdp.zcopy;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;

/**
 * The data sink's side of SrcAvail zero copy ({@code docs/protocol.md} section 9): each advertisement's
 * remote part is RDMA-read straight into the reader's buffer when the reader reaches it, and reported
 * with RdmaRdCompl; a heap or small reader buffer, a SrcAvailCancel or a shut input refuses it with
 * SendSm (the source sends the rest as Data). A READ the device refuses (bad rkey, address or length)
 * aborts the connection as {@link Violation#BAD_SRC_AVAIL}. Runs under the connection's lock.
 */
final class SrcAvailReceiver {
    /** Advertisements we accept outstanding, announced in our Hello ({@code max_adverts}). */
    static final int MAX_ADVERTS = 4;
    /** Advertisements queued, refused or cancelled ones included, before the reader reaches them. */
    private static final int RING = 16;
    /** A reader buffer smaller than this (and than what is left) is refused: a READ would cost more. */
    static final int MIN_READ_BYTES = 4096;

    private static final class Advert {
        int mseq;
        long len;
        long offset;
        int rkey;
        long vaddr;
        /** Not refused, cancelled or read completely. */
        boolean active;
        /** The reader is done with it (it stays at the head until the reader reaches the next one). */
        boolean finished;
        /** Voided by the refusal of an earlier one: the source sends its bytes again as Data. */
        boolean discarded;
    }

    private final ZeroCopy zc;
    private final LargeTransfers.Port port;
    private final Advert[] ring = new Advert[RING];
    private long head;
    private long tail;
    /** Adverts queued and active, not fully read: at most {@link #MAX_ADVERTS}. */
    private int activeCount;
    private long remoteBytes;
    /** Bytes read and not yet reported; SendSm messages owed. */
    private long unreported;
    private int sendSmOwed;
    /**
     * We refused an advertisement: every SrcAvail the source sent before it saw our SendSm (its
     * {@code mseq_ack} older than the SendSm's {@code mseq}, or the SendSm not yet sent) is discarded,
     * inline bytes included — the source sends them again by buffer copy.
     */
    private boolean refusing;
    private int sendSmMseq;
    private long discards;
    // the READ in flight
    private boolean reading;
    private boolean readDone;
    private long readTag;
    private int readLen;
    private ByteBuffer readInto;
    private boolean cancelAfterRead;
    private RegistrationCache.Entry readReg;
    private ScheduledFuture<?> readTimer;
    private long rdmaBytes;
    private long refusals;
    /** Samples: nanoseconds from reading an advertisement to the end until the next SrcAvail came. */
    private final SpinAdvisor spin = new SpinAdvisor();
    /** When the last advertisement was read to the end with no other queued; 0 once the next came. */
    private long readAllNs;

    SrcAvailReceiver(ZeroCopy zc, LargeTransfers.Port port) {
        this.zc = zc;
        this.port = port;
        for (int i = 0; i < RING; i++) {
            ring[i] = new Advert();
        }
    }

    boolean onSrcAvail(int mseq, long len, int inlineBytes, int rkey, long vaddr, boolean inputShut, int mseqAck) {
        if (readAllNs != 0) {
            long now = System.nanoTime();
            spin.learn(now - readAllNs);
            spin.onEvent(now);
            readAllNs = 0;
        }
        if (refusing) {
            if (sendSmOwed > 0 || unreported > 0 || mseqAck - sendSmMseq < 0) {
                discards++;
                return false; // sent before the source saw our SendSm: voided there
            }
            refusing = false;
        }
        if (inlineBytes > len) {
            port.violation(Violation.BAD_SRC_AVAIL, "SrcAvail mseq " + mseq + " carries " + inlineBytes
                + " inline bytes but advertises " + len);
            return false;
        }
        if (activeCount >= MAX_ADVERTS || tail - head == RING) {
            port.violation(Violation.TOO_MANY_ADVERTS, "SrcAvail mseq " + mseq + " while " + activeCount
                + " advertisement(s) are outstanding (max_adverts " + MAX_ADVERTS + ")");
            return false;
        }
        if (inputShut) {
            refusals++;
            startRefusing();
            return false;
        }
        Advert a = ring[(int) (tail % RING)];
        tail++;
        a.mseq = mseq;
        a.len = len;
        a.offset = inlineBytes;
        a.rkey = rkey;
        a.vaddr = vaddr;
        a.active = a.offset < a.len;
        a.finished = false;
        a.discarded = false;
        if (a.active) {
            activeCount++;
            remoteBytes += a.len - a.offset;
        }
        return true;
    }

    /** SrcAvailCancel: the source gives up on its outstanding advertisement. */
    void onCancel() {
        for (long i = head; i < tail; i++) {
            Advert a = ring[(int) (i % RING)];
            if (a.active) {
                if (reading && i == head) {
                    cancelAfterRead = true; // report what the READ brings, then refuse the rest
                } else {
                    refuse(a);
                }
                return;
            }
        }
        // nothing outstanding: the advertisement was read completely; our RdmaRdCompl answers the cancel
    }

    /** Refuses {@code a} with SendSm and discards every advertisement after it (the source voids them). */
    private void refuse(Advert a) {
        deactivate(a);
        refusals++;
        boolean after = false;
        for (long i = head; i < tail; i++) {
            Advert b = ring[(int) (i % RING)];
            if (b == a) {
                after = true;
            } else if (after && !b.finished) {
                if (b.active) {
                    deactivate(b);
                }
                b.discarded = true;
                discards++;
            }
        }
        startRefusing();
    }

    private void deactivate(Advert a) {
        if (a.active) {
            a.active = false;
            activeCount--;
            remoteBytes -= a.len - a.offset;
        }
    }

    private void startRefusing() {
        refusing = true;
        sendSmOwed++;
        transmit();
    }

    /** The reader reached an advertisement's inline bytes: move the ring's head to it. */
    boolean startAdvert() {
        if (head < tail && ring[(int) (head % RING)].finished) {
            head++; // the previous advertisement's remote part is behind the reader
        }
        if (head == tail) {
            return false;
        }
        Advert a = ring[(int) (head % RING)];
        if (a.discarded) {
            a.finished = true;
            return true;
        }
        return false;
    }

    int readRemote(ByteBuffer dst) {
        if (reading) {
            if (!readDone) {
                return LargeTransfers.IN_PROGRESS;
            }
            return completeRead(dst);
        }
        if (head == tail) {
            return 0;
        }
        Advert a = ring[(int) (head % RING)];
        if (a.finished) {
            return 0;
        }
        if (!a.active) {
            a.finished = true; // refused or cancelled before the reader came: its rest comes as Data
            return 0;
        }
        long left = a.len - a.offset;
        if (!dst.isDirect() || dst.isReadOnly() || dst.remaining() < Math.min(left, MIN_READ_BYTES)) {
            refuse(a);
            a.finished = true;
            return 0;
        }
        RegistrationCache.Entry e = zc.acquire(dst, 0); // the target of our READ: no remote access
        if (e == null) {
            refuse(a);
            a.finished = true;
            return 0;
        }
        int n = (int) Math.min(dst.remaining(), left);
        readTag++;
        readReg = e;
        readInto = dst;
        readLen = n;
        reading = true;
        readDone = false;
        if (!port.postRdmaRead(readTag & 0xFFFF_FFFFL, e.region.address() + dst.position(), e.region.lkey(), n,
            a.vaddr + a.offset, a.rkey)) {
            endRead();
            return LargeTransfers.FAILED;
        }
        readTimer = port.schedule(this::onReadTimeout, zc.settings().readTimeoutNs());
        return LargeTransfers.IN_PROGRESS;
    }

    private int completeRead(ByteBuffer dst) {
        int n = readLen;
        ByteBuffer into = readInto;
        endRead();
        Advert a = ring[(int) (head % RING)];
        if (dst == into) {
            dst.position(dst.position() + n);
        }
        a.offset += n;
        remoteBytes -= n;
        rdmaBytes += n;
        unreported += n;
        if (a.offset == a.len) {
            a.active = false;
            a.finished = true;
            activeCount--;
            if (tail - head == 1) {
                readAllNs = System.nanoTime();
            }
        } else if (cancelAfterRead) {
            refuse(a);
            a.finished = true;
        }
        cancelAfterRead = false;
        transmit();
        return n;
    }

    private void endRead() {
        reading = false;
        readDone = false;
        readInto = null;
        if (readTimer != null) {
            readTimer.cancel(false);
            readTimer = null;
        }
        if (readReg != null) {
            zc.release(readReg);
            readReg = null;
        }
    }

    boolean onCompletion(long tag, WorkCompletion wc) {
        if (wc.isSuccess()) {
            if (reading && tag == (readTag & 0xFFFF_FFFFL)) {
                readDone = true;
            }
            return true;
        }
        WcStatus s = wc.status();
        if (!reading || s != WcStatus.REM_ACCESS_ERR && s != WcStatus.REM_INV_REQ_ERR) {
            return false; // flushed, peer gone, transport retries: the engine's own failure path
        }
        Advert a = ring[(int) (head % RING)];
        port.violation(Violation.BAD_SRC_AVAIL, "RDMA READ of " + readLen + " bytes at vaddr 0x"
            + Long.toHexString(a.vaddr + a.offset) + " rkey 0x" + Integer.toHexString(a.rkey) + " for SrcAvail mseq "
            + a.mseq + " (len " + a.len + ") completed with " + wc.status());
        return true;
    }

    private void onReadTimeout() {
        if (reading && !readDone) {
            port.fail("zcopy.READ_TIMEOUT", "RDMA READ of " + readLen + " bytes not complete within "
                + zc.settings().readTimeoutNs() / 1_000_000 + " ms");
        }
    }

    boolean remoteLeft() {
        if (reading) {
            return true;
        }
        if (head == tail) {
            return false;
        }
        Advert a = ring[(int) (head % RING)];
        return !a.finished;
    }

    long remoteBytes() {
        return remoteBytes;
    }

    /**
     * A reader that has read the last advertisement: poll until twice the recent time from such a read
     * to the next SrcAvail ({@link SpinAdvisor}).
     */
    long spinHintNs(long nowNs) {
        if (readAllNs == 0) {
            return 0;
        }
        return spin.advise(nowNs, readAllNs + 2 * spin.average(), port.options().spinNs(), zc.settings().spinMaxNs());
    }

    void discardIncoming() {
        if (reading) {
            // never SendSm while our READ runs: the source would free the buffer under it
            cancelAfterRead = true;
            return;
        }
        for (long i = head; i < tail; i++) {
            Advert a = ring[(int) (i % RING)];
            if (a.active) {
                refuse(a); // discards the later ones too
                break;
            }
        }
        head = tail;
    }

    boolean hasPendingOutput() {
        return unreported > 0 || sendSmOwed > 0;
    }

    /** Reports first (they belong to the advertisement a SendSm ends), then SendSm. */
    void transmit() {
        if (unreported > 0 && port.postControl(MessageId.RDMA_RD_COMPL, (int) unreported) >= 0) {
            unreported = 0;
        }
        while (unreported == 0 && sendSmOwed > 0) {
            int m = port.postControl(MessageId.SEND_SM, 0);
            if (m < 0) {
                break;
            }
            sendSmOwed--;
            sendSmMseq = m;
        }
    }

    void release() {
        if (readTimer != null) {
            readTimer.cancel(false);
            readTimer = null;
        }
        if (readReg != null) {
            zc.release(readReg);
            readReg = null;
        }
        reading = false;
        readInto = null;
    }

    long rdmaBytes() {
        return rdmaBytes;
    }

    String describe() {
        return "sink adverts=" + (tail - head) + " active=" + activeCount + " remoteBytes=" + remoteBytes + " reading="
            + reading + " unreported=" + unreported + " sendSmOwed=" + sendSmOwed + " refusing=" + refusing + " refusals=" + refusals
            + " discards=" + discards
            + " rdmaBytes=" + rdmaBytes + " spin " + spin.describe();
    }
}
