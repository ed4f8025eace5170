package io.jsdp.flow.credit;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;

/**
 * Credit-based flow control, as the SDP specification defines it ({@code sdp-wire.md} C.6): each
 * message occupies one of the peer's fixed-size receive buffers; every message carries the sender's
 * posted-buffer count {@code bufs} and the last sequence number it received, {@code mseq_ack}; the
 * sender's credits are {@code mseq_ack - next_mseq + 1 + bufs}, one less per message sent.
 *
 * <p>The last credit is reserved: Data and every control message except a credit update need two
 * credits; a credit update (Data without payload) may use the last one only when it tells the peer
 * of buffers it does not know of (CA4-82: "provide additional credits"): posted beyond what our last
 * message advertised less the peer messages received since. The peer can have at most that many
 * messages in flight, so after the update it keeps at least one credit, even when both sides spend
 * their last credit at once — and so can always answer.
 *
 * <p>Credits are returned lazily (seed 001 §3.2.1): a credit update is due when the peer does not
 * know of at least half of the buffers posted (and of at least two), or when the peer is starving —
 * its last message left it fewer than two credits — and there is any buffer to tell it about. Data
 * this side sends carries {@code bufs} anyway.
 *
 * <p>Why a connection needs at least three receive buffers: with two, data needs both, so every
 * message — an update too — leaves its sender starving and the peer must answer it with an update,
 * for ever, even on an idle connection. With three, the side answering a starving peer gets all
 * three back, keeps two after its update, and the exchange stops.
 *
 * <p>Checking the peer: for every message of ours the accounting keeps the {@code bufs} and
 * {@code mseq_ack} it carried, so when a peer message {@code m} acknowledges our message {@code k},
 * the credits the peer had for {@code m} are {@code bufs[k] - (m - 1 - ack[k])}; a message it had no
 * credit for is {@link Violation#NO_CREDIT}.
 *
 * <p>The other schemes keep this accounting for their messages: packetized for its RingData
 * notifications and control messages, NIC-assisted without the credit check on receipt (the device,
 * not the sender, keeps a message from arriving without a posted buffer there).
 *
 * <p>Single-threaded: the engine calls it under the connection lock.
 */
public final class CreditFlowControl implements FlowControl {
    /** The most receive buffers a peer may advertise; more is {@link Violation#BUFS_OUT_OF_RANGE}. */
    public static final int MAX_BUFS = 4096;
    /** Sent messages remembered for the peer's credit check; a power of two above {@link #MAX_BUFS}. */
    private static final int HISTORY = 8192;

    private final int[] sentBufs = new int[HISTORY];
    private final int[] sentAck = new int[HISTORY];
    private int credits;
    /** The highest {@code mseq_ack} the peer sent: its acknowledgements never go back. */
    private int peerAck;
    /** Our last message's {@code bufs} and {@code mseq_ack}: what the peer will know of our buffers. */
    private int lastSentBufs;
    private int lastSentAck;
    /** The peer's last message left it fewer than two credits: tell it about our buffers. */
    private boolean peerStarving;
    /** The peer's credits as it counted them after its latest message (not raised by what we sent since). */
    private int peerOwnCredits = Integer.MAX_VALUE;
    private final boolean checksPeerCredits;

    /** Credit-based flow control that checks every peer message against the peer's credits. */
    public CreditFlowControl() {
        this(true);
    }

    /**
     * The accounting, with or without the check of the peer's credits.
     *
     * @param checksPeerCredits false when the peer may send beyond its credits (NIC-assisted: its
     *     device holds such a message until this side posts a buffer); such a peer never starves, so
     *     credit updates go only when half the buffers are unknown to it
     */
    public CreditFlowControl(boolean checksPeerCredits) {
        this.checksPeerCredits = checksPeerCredits;
    }

    @Override
    public FlowControlScheme scheme() {
        return FlowControlScheme.CREDIT;
    }

    @Override
    public boolean holdsPartialMessages() {
        return true;
    }

    @Override
    public int deviceMessages() {
        return 0;
    }

    @Override
    public boolean movesDataWithoutApplication() {
        return true;
    }

    @Override
    public void onHandshake(boolean active, int peerBufs) {
        // Active: HelloAck (mseq_ack 0) arrived after our Hello (mseq 0): credits = 0 - 1 + 1 + bufs.
        // Passive: the Hello's bufs, of which our HelloAck will take one in onSend.
        credits = peerBufs;
        peerAck = active ? 0 : -1;
    }

    @Override
    public boolean canSend(int kind, int posted, int lastReceivedMseq) {
        if (kind != CREDIT_UPDATE || credits >= 2) {
            return credits >= 2;
        }
        return credits == 1 && posted > peerView(lastReceivedMseq);
    }

    /** What the peer may still send us, as far as our messages told it: at most its messages in flight. */
    private int peerView(int lastReceivedMseq) {
        return lastSentBufs - (lastReceivedMseq - lastSentAck);
    }

    @Override
    public void onSend(int mseq, int bufs, int mseqAck) {
        credits--;
        peerStarving = false;
        sentBufs[mseq & (HISTORY - 1)] = bufs;
        sentAck[mseq & (HISTORY - 1)] = mseqAck;
        lastSentBufs = bufs;
        lastSentAck = mseqAck;
    }

    @Override
    public Violation onReceive(int mseq, int mseqAck, int bufs, boolean creditUpdate, int nextMseq) {
        if (bufs > MAX_BUFS) {
            return Violation.BUFS_OUT_OF_RANGE;
        }
        // mseq_ack in [peerAck, nextMseq - 1], wrap-around safe
        if (mseqAck - peerAck < 0 || (nextMseq - 1) - mseqAck < 0) {
            return Violation.ACK_OUT_OF_RANGE;
        }
        int k = mseqAck & (HISTORY - 1);
        int creditsBefore = sentBufs[k] - (mseq - 1 - sentAck[k]);
        if (checksPeerCredits && creditsBefore < (creditUpdate ? 1 : 2)) {
            return Violation.NO_CREDIT;
        }
        peerAck = mseqAck;
        credits = mseqAck - nextMseq + 1 + bufs;
        peerStarving = creditsBefore - 1 < 2;
        peerOwnCredits = creditsBefore - 1;
        return null;
    }

    @Override
    public boolean creditUpdateNeeded(int posted, int lastReceivedMseq, int capacity) {
        int peerView = peerView(lastReceivedMseq);
        int unadvertised = posted - peerView;
        // A peer that may send beyond its credits (NIC-assisted) never starves: its device sends as soon as
        // we post a buffer, so it hears of buffers only lazily, in bulk.
        return unadvertised > 0 && (unadvertised >= Math.max(2, (capacity + 1) / 2)
            || checksPeerCredits && peerStarving && peerView < 2);
    }

    @Override
    public int peerCredits() {
        return peerOwnCredits;
    }

    @Override
    public int credits() {
        return credits;
    }

    @Override
    public String describe() {
        return "credits=" + credits + " peerAck=" + peerAck + " lastSentBufs=" + lastSentBufs
            + " lastSentAck=" + lastSentAck
            + " peerStarving=" + peerStarving + " peerOwnCredits=" + peerOwnCredits;
    }
}
