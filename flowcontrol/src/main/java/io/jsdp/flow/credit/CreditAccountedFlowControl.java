package io.jsdp.flow.credit;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.Violation;

/**
 * A scheme that keeps the specification's per-message credit accounting (every message still carries
 * {@code bufs} and {@code mseq_ack}) and differs in where the data goes or who moves it: the packetized
 * and NIC-assisted schemes. The message accounting is delegated to a {@link CreditFlowControl}, once
 * for both; a subclass adds its own decisions and describes its state after the credit line.
 */
public abstract class CreditAccountedFlowControl implements FlowControl {
    /** The message accounting; subclasses read it for their own decisions. */
    protected final CreditFlowControl credit;

    /**
     * @param credit the accounting this scheme uses
     */
    protected CreditAccountedFlowControl(CreditFlowControl credit) {
        this.credit = credit;
    }

    @Override
    public final void onHandshake(boolean active, int peerBufs) {
        credit.onHandshake(active, peerBufs);
    }

    @Override
    public final boolean canSend(int kind, int posted, int lastReceivedMseq) {
        return credit.canSend(kind, posted, lastReceivedMseq);
    }

    @Override
    public final void onSend(int mseq, int bufs, int mseqAck) {
        credit.onSend(mseq, bufs, mseqAck);
        sent(mseq);
    }

    @Override
    public final Violation onReceive(int mseq, int mseqAck, int bufs, boolean creditUpdate, int nextMseq) {
        Violation v = credit.onReceive(mseq, mseqAck, bufs, creditUpdate, nextMseq);
        if (v == null) {
            received(mseqAck);
        }
        return v;
    }

    /**
     * A message of ours was accounted for; a subclass may note what it told the peer.
     *
     * @param mseq its sequence number
     */
    protected void sent(int mseq) {
    }

    /**
     * A valid peer message arrived.
     *
     * @param mseqAck the last of our messages it had received
     */
    protected void received(int mseqAck) {
    }

    @Override
    public final boolean creditUpdateNeeded(int posted, int lastReceivedMseq, int capacity) {
        return credit.creditUpdateNeeded(posted, lastReceivedMseq, capacity);
    }

    @Override
    public final int peerCredits() {
        return credit.peerCredits();
    }

    @Override
    public final int credits() {
        return credit.credits();
    }
}
