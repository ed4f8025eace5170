package io.jsdp.testbed;

import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.SharedSegment;
import io.jsdp.testbed.shm.WaitWord;

/**
 * A queue pair's connection to a queue pair of another process: the two wires (ours, which we write
 * as requester; the peer's, which we read as responder), the peer's key table and doorbell, and the
 * state of both roles. Requester fields are guarded by the queue pair's sqLock, responder fields by
 * its rqLock; the coverage fields belong to the progress thread.
 */
final class XpLink {
    final NodeId peerNode;
    final SharedSegment txSegment;
    /** Our outbound messages (we are the requester). */
    final Wire tx;
    /** The peer's outbound messages (we are the responder). */
    final Wire rx;
    final KeyTable peerKeys;
    final WaitWord peerDoorbell;
    final int peerQpNumber;
    /** The name of the peer's wire segment, which we map while linked. */
    final String rxSegmentName;
    final int peerPd;
    final long peerMinRnrNs;
    /**
     * The peer's device when it is in this process, else null: one-sided requests then reach any of
     * its memory regions, as the in-JVM path does, not only device memory.
     */
    final SoftDevice localPeer;
    /** The queue pairs' direct doorbell: rung first when the peer's waiter is armed on it. */
    final DirectDoorbell direct;
    /** The peer process's waits rung lately, shared by this device's links to it; set once linked. */
    volatile RingMemo ringMemo;

    // ---- requester: guarded by sqLock (read racily as hints by pollers) ----
    /** Messages published. */
    long txSeq;
    /** Messages answered (or cancelled) and accounted for. */
    long txAcked;
    /** The send-queue sequence of each slot's message, -1 for a message without a request (a notice). */
    final long[] slotRequest;
    /** The data-area position after each slot's payload: where the area is free up to once it is answered. */
    final long[] slotDataEnd;
    long dataHead;
    long dataTail;
    /** When the oldest unanswered message was first seen RNR-marked or its responder silent, else 0. */
    long rnrSinceNs;
    long silentSinceNs;
    /** Transport retries counted since {@link #silentSinceNs}. */
    int silentRetries;
    final KeyTable.Entry scratch = new KeyTable.Entry();
    /** The peer device-memory segment last reached, so a stream of one-sided requests maps it once. */
    long lastSegment;
    java.nio.ByteBuffer lastSegmentBuffer;

    /** The message withdrawn after its RNR retries ran out, or -1. */
    long withdrawn = -1;
    /** Whether we told the responder to take nothing more. */
    boolean closed;

    // ---- responder: guarded by rqLock ----
    /** The next message to act on; read racily by pollers. */
    long rxHead;
    boolean silent;
    /**
     * The message we marked RNR, or -1: written before we look at the receive queue once more, read by
     * posters after they publish a receive (both volatile: one of them sees the other).
     */
    volatile long rnrMarked = -1;
    /** The withdrawn message we answered CANCELLED, or -1. */
    long cancelAnswered = -1;

    // ---- progress thread ----
    long seenSendPolls;
    long seenRecvPolls;
    boolean wantsAnswers;
    boolean wantsMessages;

    XpLink(NodeId peerNode, SharedSegment txSegment, Wire tx, Wire rx, String rxSegmentName, KeyTable peerKeys,
           WaitWord peerDoorbell, XpEndpoint remote, SoftDevice localPeer) {
        this.peerNode = peerNode;
        this.localPeer = localPeer;
        this.rxSegmentName = rxSegmentName;
        this.txSegment = txSegment;
        this.tx = tx;
        this.rx = rx;
        this.peerKeys = peerKeys;
        this.peerDoorbell = peerDoorbell;
        this.peerQpNumber = remote.qpNumber();
        this.peerPd = remote.pdNumber();
        this.peerMinRnrNs = remote.minRnrTimerNs();
        this.slotRequest = new long[tx.slots()];
        this.slotDataEnd = new long[tx.slots()];
        this.direct = new DirectDoorbell(tx, "QP " + remote.qpNumber() + " of " + peerNode);
    }

    /**
     * How long a poller of our send queue lets our oldest message wait unanswered before it rings the
     * peer's doorbell anyway: the peer's pollers may have stopped without arming, and its progress
     * thread would otherwise see the message only at its next look ({@link XpEngine#IDLE_NS}).
     */
    static final long NUDGE_NS = java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(100);

    // ---- nudges: racy hints written by any poller (a lost update costs at most one extra doorbell) ----
    private long nudgeSeq = -1;
    private long nudgeSinceNs;

    /**
     * A poller found message {@code seq}, our oldest, still unanswered: rings the peer's doorbell once
     * it has waited {@link #NUDGE_NS} since a poller first saw it so, and again every {@link #NUDGE_NS}.
     * The ring reaches the peer's progress thread only when it waits on its doorbell word (cheap otherwise).
     */
    void nudge(long seq) {
        long now = System.nanoTime();
        if (nudgeSeq != seq) {
            nudgeSeq = seq;
            nudgeSinceNs = now;
        } else if (now - nudgeSinceNs >= NUDGE_NS) {
            nudgeSinceNs = now;
            if (rx.peerDirectHeld()) {
                return; // a thread of the peer waits on its direct doorbell: it looks before it sleeps
            }
            peerDoorbell.wake(peerQpNumber);
        }
    }

    /** Whether messages are out unanswered (a racy hint outside sqLock). */
    boolean outstanding() {
        return txAcked != txSeq;
    }

    /**
     * Rings the peer's doorbell if its wire asks for one (after we published: a volatile store): its
     * waiting thread's direct doorbell when armed, else its device's.
     */
    void wakeResponder() {
        if (ringDirect(false)) {
            return; // the peer's waiting thread polls for itself
        }
        if (tx.responderWantsDoorbell()) {
            peerDoorbell.wake(peerQpNumber);
        }
    }

    /**
     * Rings the peer's doorbell if its wire asks for one (after we answered or changed our silent
     * word). The fence orders those release stores before the load of the word (a Dekker pair with
     * the peer's progress thread, which sets the word and then looks).
     */
    void wakeRequester() {
        java.lang.invoke.VarHandle.fullFence();
        if (ringDirect(true)) {
            return;
        }
        if (rx.requesterWantsDoorbell()) {
            peerDoorbell.wake(peerQpNumber);
        }
    }

    /**
     * The peer's waiting thread, when one holds its direct doorbell: rung if armed, left alone if awake
     * (it looks before it sleeps).
     *
     * @param answer an answer (or our silent word) rather than a message
     *
     * @return true when the peer's device doorbell is not needed
     */
    private boolean ringDirect(boolean answer) {
        int d = rx.peerDirect(answer);
        if (d == Wire.DIRECT_PRESENT) {
            return true;
        }
        if ((d & Wire.DIRECT_STATE) != Wire.DIRECT_RING) {
            return false; // nobody holds it: the device's doorbell
        }
        int wait = Wire.directWait(d);
        RingMemo memo = ringMemo;
        if (wait == 0 || memo == null) {
            return direct.ring();
        }
        long now = System.nanoTime();
        if (memo.rungLately(wait, now)) {
            return true; // the wait's waiter is woken already and finds this arm taken when it disarms
        }
        if (!direct.ring()) {
            return false;
        }
        memo.rung(wait, now);
        return true;
    }

    @Override
    public String toString() {
        return "XpLink[peer QP " + peerQpNumber + " of " + peerNode + ", tx " + txAcked + ".." + txSeq + ", rx " + rxHead
            + "]";
    }
}
