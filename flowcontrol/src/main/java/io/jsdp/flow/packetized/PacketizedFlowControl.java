package io.jsdp.flow.packetized;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.credit.CreditAccountedFlowControl;
import io.jsdp.flow.credit.CreditFlowControl;

/**
 * Packetized flow control (seed 001 §4.1.3): the receiver's socket buffer is one byte ring which the
 * sender manages. The sender RDMA-WRITEs each run of bytes at the ring's next free byte and tells the
 * receiver with a small RingData message (offset, length); the receiver returns consumed space with the
 * cumulative count of bytes it consumed, piggybacked on its own RingData or in a RingAck. A 1-byte write
 * takes one byte of the ring, not a whole receive buffer, and whatever finds no room in the ring waits
 * in the sender's socket buffer, where later writes coalesce with it into one larger write
 * ({@code docs/protocol.md} section 5b).
 *
 * <p>As the seed designs it, the scheme is all software on the sender's side: data held for lack of
 * ring space moves only inside the application's calls on the connection (§4.1.4: "until the
 * application comes out of its computation loop and calls a communication function, no progress can be
 * made"), so {@link #movesDataWithoutApplication()} is false.
 *
 * <p>The notifications and control messages still use the specification's message accounting
 * ({@link CreditFlowControl}); they hold their receive buffer only until the receiver processed them.
 *
 * <p>Checking the peer: a RingData must start at the ring's next free byte ({@link Violation#RING_OUT_OF_ORDER})
 * and fit into the free bytes ({@link Violation#RING_OVERRUN}); a consumed count may not go back nor
 * return more than was written ({@link Violation#RING_ACK_OUT_OF_RANGE}).
 *
 * <p>Counters are cumulative byte counts; the wire carries their low 32 bits (rings are far smaller
 * than 2^31 bytes, so differences are exact). Single-threaded: the engine calls it under the
 * connection lock.
 */
public class PacketizedFlowControl extends CreditAccountedFlowControl {
    /** The smallest ring a peer may advertise. */
    public static final int RING_BYTES_MIN = 256;
    /** The largest ring a peer may advertise (256 buffers of 1 MiB). */
    public static final int RING_BYTES_MAX = 256 << 20;

    // ---- sending into the peer's ring
    private int peerRingBytes;
    private long ringTail;
    private long peerConsumed;
    // ---- the peer sending into ours
    private int ringBytes;
    private long written;
    private long consumed;
    private long advertised;
    /** By our mseq: the consumed count the peer knows once it has that message (a power of two above MAX_BUFS). */
    private final long[] toldConsumed = new long[8192];
    /** The consumed count the peer knew when it sent its latest message. */
    private long peerKnownConsumed;

    /** Packetized flow control; the ring sizes come with the handshake. */
    public PacketizedFlowControl() {
        this(new CreditFlowControl());
    }

    /**
     * The ring accounting over the given message accounting, for a scheme that extends packetized flow
     * control (NIC-assisted).
     *
     * @param credit the message accounting
     */
    protected PacketizedFlowControl(CreditFlowControl credit) {
        super(credit);
    }

    @Override
    public FlowControlScheme scheme() {
        return FlowControlScheme.PACKETIZED;
    }

    @Override
    public boolean holdsPartialMessages() {
        return false;
    }

    @Override
    public int deviceMessages() {
        return 0;
    }

    @Override
    public boolean movesDataWithoutApplication() {
        return false;
    }

    /**
     * Sets the two rings' sizes from the handshake.
     *
     * @param ownRingBytes the ring this side advertised
     * @param peerRingBytes the ring the peer advertised
     */
    public void onRings(int ownRingBytes, int peerRingBytes) {
        this.ringBytes = ownRingBytes;
        this.peerRingBytes = peerRingBytes;
    }

    /**
     * Whether a ring size is acceptable.
     *
     * @param bytes the advertised size
     * @return true within {@link #RING_BYTES_MIN} … {@link #RING_BYTES_MAX}
     */
    public static boolean validRingBytes(long bytes) {
        return bytes >= RING_BYTES_MIN && bytes <= RING_BYTES_MAX;
    }

    // ------------------------------------------------------------------ sender

    /**
     * Free bytes in the peer's ring.
     *
     * @return what may be written now
     */
    public int ringSpace() {
        return (int) (peerRingBytes - (ringTail - peerConsumed));
    }

    /**
     * The peer ring's offset of the next byte written.
     *
     * @return the offset
     */
    public int ringTailOffset() {
        return (int) (ringTail % peerRingBytes);
    }

    /**
     * The peer ring's size.
     *
     * @return bytes
     */
    public int peerRingBytes() {
        return peerRingBytes;
    }

    /**
     * Accounts for {@code n} bytes just written into the peer's ring.
     *
     * @param n bytes, at most {@link #ringSpace()}
     */
    public void onRingWrite(int n) {
        ringTail += n;
    }

    /**
     * Whether the peer consumed everything written into its ring.
     *
     * @return true when the peer's ring is empty as far as its acknowledgements tell
     */
    public boolean peerConsumedAll() {
        return peerConsumed == ringTail;
    }

    /**
     * Takes the peer's cumulative consumed count.
     *
     * @param consumedWire its low 32 bits, as the wire carries them
     * @return null, or {@link Violation#RING_ACK_OUT_OF_RANGE} when it goes back or returns bytes never written
     */
    public Violation onRingAck(int consumedWire) {
        int delta = consumedWire - (int) peerConsumed;
        if (delta < 0 || delta > ringTail - peerConsumed) {
            return Violation.RING_ACK_OUT_OF_RANGE;
        }
        peerConsumed += delta;
        return null;
    }

    // ------------------------------------------------------------------ receiver

    /**
     * Checks and takes a RingData notification: the peer wrote {@code length} bytes at {@code offset}.
     *
     * @param offset where the bytes start in our ring
     * @param length how many (they may wrap round the ring's end)
     * @return null, {@link Violation#RING_OUT_OF_ORDER} or {@link Violation#RING_OVERRUN}
     */
    public Violation onRingData(long offset, long length) {
        if (offset != written % ringBytes) {
            return Violation.RING_OUT_OF_ORDER;
        }
        if (length <= 0 || length > ringBytes - (written - consumed)) {
            return Violation.RING_OVERRUN;
        }
        written += length;
        return null;
    }

    /**
     * Bytes in our ring not read yet.
     *
     * @return the count
     */
    public long unread() {
        return written - consumed;
    }

    /**
     * Our ring's offset of the next byte to read.
     *
     * @return the offset
     */
    public int readOffset() {
        return (int) (consumed % ringBytes);
    }

    /**
     * Accounts for bytes the application read (or this side dropped).
     *
     * @param n bytes
     */
    public void onConsumed(long n) {
        consumed += n;
    }

    /**
     * Whether the peer should hear of consumed bytes now: half the ring was freed since the last count
     * we sent. A sender stalls only on a full ring, and then a reader that reads on frees half of it,
     * so this always comes.
     *
     * @return true when a RingAck is due (unless a RingData carries the count first)
     */
    public boolean ringAckNeeded() {
        return consumed - advertised >= Math.max(1, ringBytes / 2);
    }

    /**
     * The consumed count to send; remembers it as told.
     *
     * @return its low 32 bits
     */
    public int takeConsumedForWire() {
        advertised = consumed;
        return (int) consumed;
    }

    /**
     * Whether the peer may have been holding data for lack of ring space: our ring was full as far as it
     * knew when it sent its latest message (the consumed count of our messages up to its {@code mseq_ack};
     * counts we sent after it do not count: the peer may never have seen them).
     *
     * @return true when the peer's latest view of our ring left it no room
     */
    public boolean peerMayBeOutOfRing() {
        return written - peerKnownConsumed >= ringBytes;
    }

    // ------------------------------------------------------------------ message accounting

    @Override
    protected void sent(int mseq) {
        toldConsumed[mseq & (toldConsumed.length - 1)] = advertised;
    }

    @Override
    protected void received(int mseqAck) {
        if (mseqAck >= 0) {
            peerKnownConsumed = toldConsumed[mseqAck & (toldConsumed.length - 1)];
        }
    }







    @Override
    public String describe() {
        return credit.describe() + " peerRing=" + peerRingBytes + " tail=" + ringTail + " peerConsumed=" + peerConsumed
            + " ring=" + ringBytes + " written=" + written + " consumed=" + consumed + " advertised=" + advertised
            + " peerKnownConsumed=" + peerKnownConsumed;
    }
}
