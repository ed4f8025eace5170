package io.jsdp.flow;

/**
 * A flow-control scheme: decides when the engine may put a message on the wire and when it must tell
 * the peer about receive buffers (seed 001 ch. 4). The engine owns the sequence numbers and calls
 * every method under its connection lock; implementations are single-threaded and allocate nothing.
 *
 * <p>Credit-based flow control ({@link io.jsdp.flow.credit.CreditFlowControl}) is the specification's
 * scheme and the only one so far; the packetized and NIC-assisted schemes of seed 001 come behind
 * this interface later, negotiated by Hello capability bits.
 */
public interface FlowControl {
    /** {@link #canSend} kind: a message with payload, or any control message but a credit update. */
    int DATA = 0;
    /** {@link #canSend} kind: a message whose only purpose is to advertise receive buffers. */
    int CREDIT_UPDATE = 1;

    /**
     * The scheme's name, as configuration and snapshots spell it.
     *
     * @return e.g. {@code "credit"}
     */
    String name();

    /**
     * Starts the accounting from the handshake.
     *
     * @param active whether this side sent the Hello
     * @param peerBufs the {@code bufs} of the peer's Hello or HelloAck
     */
    void onHandshake(boolean active, int peerBufs);

    /**
     * Whether a message of {@code kind} may be sent now.
     *
     * @param kind {@link #DATA} or {@link #CREDIT_UPDATE}
     * @param posted receive buffers this side has posted (what the message will advertise)
     * @param lastReceivedMseq the last sequence number received
     * @return true when the peer has a receive buffer for it without breaking the reserve
     */
    boolean canSend(int kind, int posted, int lastReceivedMseq);

    /**
     * Accounts for a message just posted.
     *
     * @param mseq its sequence number
     * @param bufs the {@code bufs} it carries
     * @param mseqAck the {@code mseq_ack} it carries
     */
    void onSend(int mseq, int bufs, int mseqAck);

    /**
     * Checks and accounts for a message received (after the Hello/HelloAck exchange).
     *
     * @param mseq its sequence number, already checked to be in order
     * @param mseqAck its {@code mseq_ack}
     * @param bufs its {@code bufs}
     * @param creditUpdate whether it is a pure credit update (Data without payload)
     * @param nextMseq the sequence number this side will send next
     * @return null, or the violation the message commits
     */
    Violation onReceive(int mseq, int mseqAck, int bufs, boolean creditUpdate, int nextMseq);

    /**
     * Whether this side should send a credit update now: when the peer does not know of enough of the
     * buffers posted, or is starving and there is any buffer to tell it about.
     *
     * @param posted receive buffers posted now
     * @param lastReceivedMseq the last sequence number received
     * @param capacity the receive queue's size
     * @return true when a credit update should go now
     */
    boolean creditUpdateNeeded(int posted, int lastReceivedMseq, int capacity);

    /**
     * The peer receive buffers this side may still use.
     *
     * @return credits, possibly negative when the peer shrank its advertisement
     */
    int credits();

    /**
     * One line of the accounting state, for snapshots.
     *
     * @return e.g. "credits=5 peerView=3"
     */
    String describe();
}
