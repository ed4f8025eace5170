package io.jsdp.flow;

/**
 * A flow-control scheme: decides when the engine may put a message on the wire, whether a partly
 * filled message waits (Nagle) or goes, whether the device may hold messages the peer has no credit
 * for yet, whether held data moves without the application, and when this side must tell the peer
 * about receive buffers (seed 001 ch. 4). The engine owns the sequence numbers and the data movement
 * and calls every method under its connection lock; implementations are single-threaded and allocate
 * nothing.
 *
 * <p>Every scheme keeps the specification's message accounting ({@code bufs}, {@code mseq_ack}): all
 * SDP messages still travel as SENDs into the peer's posted receive buffers. The schemes differ in
 * what a Data message carries and when it may go:
 * <ul>
 * <li>{@link io.jsdp.flow.credit.CreditFlowControl} — the specification's: payload in the SEND, two
 *     credits per message, partial messages held while one is in flight;</li>
 * <li>{@link io.jsdp.flow.packetized.PacketizedFlowControl} — payload by RDMA WRITE into the peer's
 *     byte ring, a small RingData SEND tells where; the ring's free bytes are the real window;</li>
 * <li>{@link io.jsdp.flow.nicassisted.NicAssistedFlowControl} — packetized's ring while it has room;
 *     beyond it up to {@link #deviceMessages()} Data messages (payload in the SEND) are handed to the
 *     device, which sends each when the peer posts a buffer (receiver-not-ready retry).</li>
 * </ul>
 * Negotiated per connection by Hello capability bits ({@link FlowControlScheme}).
 */
public interface FlowControl {
    /** {@link #canSend} kind: a message with payload, or any control message but a credit update. */
    int DATA = 0;
    /** {@link #canSend} kind: a message whose only purpose is to advertise receive buffers. */
    int CREDIT_UPDATE = 1;

    /**
     * The scheme.
     *
     * @return e.g. {@link FlowControlScheme#CREDIT}
     */
    FlowControlScheme scheme();

    /**
     * The scheme's name, as configuration and snapshots spell it.
     *
     * @return e.g. {@code "credit"}
     */
    default String name() {
        return scheme().configName();
    }

    /**
     * Whether a partly filled message waits while earlier data is in flight (Nagle's rule with the send
     * completion standing in for the ACK), so later writes fill it; false sends it as soon as the peer
     * has room and coalesces only what finds no room (packetized, seed 001 §4.1.3).
     *
     * @return true to hold partial messages
     */
    boolean holdsPartialMessages();

    /**
     * Data messages the engine may post beyond the peer's ring and credits: the device holds each until
     * the peer posts a receive buffer for it (InfiniBand's message-level flow control, seed 001 §4.2),
     * so they move while the application computes. 0: never post without room.
     *
     * @return the device-handled part of the send buffer, in messages
     */
    int deviceMessages();

    /**
     * Whether the stack's progress thread may post held data when credits or ring space come back
     * (the NIC-assisted scheme's "interrupt", and what jsdp's credit-based scheme does). False: held
     * data moves only inside the application's calls on the connection (or after it closed or shut its
     * output), as seed 001 §4.1.4 describes packetized flow control.
     *
     * @return true when data moves without the application
     */
    boolean movesDataWithoutApplication();

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

    /**
     * The credits the peer had, as far as it knew, right after its latest message: what our messages up
     * to that message's {@code mseq_ack} gave it, less its messages since. Below two (a Data message's
     * price) the peer may have been holding data for lack of credit, whatever we advertised after: it may
     * never have seen that advertisement, or its answer may be lost (a peer that died).
     *
     * @return the peer's own count of its credits after its latest message; large before its first
     *     message after the handshake (which gives it at least three)
     */
    int peerCredits();
}
