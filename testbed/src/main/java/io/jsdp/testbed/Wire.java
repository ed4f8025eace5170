package io.jsdp.testbed;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One direction of a queue-pair connection across processes: the messages a requester's send queue
 * sends its peer (SEND, SEND_WITH_IMM, the immediate of RDMA_WRITE_WITH_IMM, and a responder-error
 * notice) in a shared-memory segment the requester owns and the responder maps. One-sided RDMA
 * WRITE and READ do not pass through it: the requester copies into or out of the responder's device
 * memory directly.
 *
 * <pre>
 *  header (384 B, each word on its own cache line)
 *    0   magic (i32), slots (i32), data capacity (i32)          requester, at creation
 *    64  requester wants a doorbell on answers (i32)              requester
 *    128 responder wants a doorbell on messages (i32)             responder
 *    192 responder not answering (i32): its queue pair is in ERROR, RESET or destroyed, or its link down
 *    256 withdrawn (i64): the one message to cancel if not yet taken, -1 for none   requester
 *    264 closed (i32): the requester is in ERROR, take nothing more                    requester
 *    320 the requester's direct doorbell (i32): 0 nobody waits there, 2 a thread holds it (awake),
 *        1 armed (about to sleep), 3 armed for messages only, in the low two bits; an arm carries its
 *        wait's number in the other 30; the responder that rings takes the arm (→ 2)
 *        ({@link DirectDoorbell})
 *  slots (128 B each, slot = sequence &amp; (slots - 1)), written by the requester only
 *    0   published (i64) = sequence &lt;&lt; 8 | 1
 *    8   opcode (i32)  12 send flags (i32)  16 length (i32)  20 immediate (i32)
 *    24  data offset (i32): -1 when the payload is inline
 *    28  arrival (i32): the low 32 bits of System.nanoTime() from which the responder may see the
 *        message (the sender's wire latency), 0 for at once
 *    32  inline payload, up to {@link #INLINE_MAX} bytes
 *  answers (8 B each, one per slot), written by the responder only
 *        sequence &lt;&lt; 16 | WcStatus code &lt;&lt; 8 | RNR, DONE or CANCELLED
 *  data area: payloads too long for a slot, a byte ring the requester allocates in posting order
 *  and frees as answers come back
 * </pre>
 *
 * <p>Each word has one writer, so no step needs an atomic read-modify-write across processes, and
 * the responder's answers — eight to a cache line, apart from the slots — stay in its cache until the
 * requester looks: taking and answering a message costs the responder no cache-line round trip.
 * The responder alone decides whether a message is taken. When a requester's RNR retries run out it
 * withdraws that message (the "withdrawn" word) and waits for the verdict: the responder, reaching
 * it untaken, answers CANCELLED and takes nothing more; if it had taken it already (a receive came
 * first), its DONE stands. So an RNR_RETRY_EXC_ERR completion never disagrees with what the
 * responder did. A requester going to ERROR sets "closed": the responder takes nothing more. A responder that acts on a message marks its answer DONE with the requester's status; one that
 * has no receive for it marks it RNR (and delivers it later if a receive comes first). The sequence in
 * every word makes a stale word of the previous lap unmistakable.
 *
 * <p>All accesses are through {@link MethodHandles#byteBufferViewVarHandle} in native order (both
 * processes are on one host); a peer's segment is validated when attached and every offset read from
 * it is checked before use, so a malformed peer cannot make this process read or write outside the
 * segment.
 */
final class Wire {
    static final int MAGIC = 0x6a736477; // "jsdw"
    static final int SLOT_BYTES = 128;
    /** Payload bytes a slot carries itself. */
    static final int INLINE_MAX = 96;
    static final int HEADER_BYTES = 384;

    static final int CODE_PUBLISHED = 1;
    static final int CODE_RNR = 2;
    static final int CODE_DONE = 4;
    static final int CODE_CANCELLED = 5;

    /** Opcode of the notice a requester sends when a one-sided request broke the responder's rules. */
    static final int OP_RESPONDER_ERROR = 0x100;

    private static final int MAGIC_OFF = 0;
    private static final int SLOTS_OFF = 4;
    private static final int DATA_CAP_OFF = 8;
    private static final int REQUESTER_WANTS_OFF = 64;
    private static final int RESPONDER_WANTS_OFF = 128;
    private static final int SILENT_OFF = 192;
    private static final int WITHDRAWN_OFF = 256;
    private static final int CLOSED_OFF = 264;
    private static final int DIRECT_OFF = 320;

    private static final int S_STATE = 0;
    private static final int S_OPCODE = 8;
    private static final int S_FLAGS = 12;
    private static final int S_LENGTH = 16;
    private static final int S_IMM = 20;
    private static final int S_DATA = 24;
    private static final int S_ARRIVE = 28;
    static final int S_INLINE = 32;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buf;
    private final int slots;
    private final int mask;
    private final int dataCapacity;
    private final int answerBase;
    private final int dataBase;

    private Wire(ByteBuffer buf, int slots, int dataCapacity) {
        this.buf = buf;
        this.slots = slots;
        this.mask = slots - 1;
        this.dataCapacity = dataCapacity;
        this.answerBase = HEADER_BYTES + slots * SLOT_BYTES;
        this.dataBase = answerBase + slots * 8;
    }

    /** Bytes of a wire with {@code slots} slots and {@code dataCapacity} bytes of data area. */
    static int bytes(int slots, int dataCapacity) {
        return HEADER_BYTES + slots * (SLOT_BYTES + 8) + dataCapacity;
    }

    /**
     * Formats a new (zero-filled) segment as a wire.
     *
     * @param buf the segment's memory, at least {@link #bytes} long
     * @param slots a power of two
     * @param dataCapacity the data area
     * @return the wire
     */
    static Wire create(ByteBuffer buf, int slots, int dataCapacity) {
        if (Integer.bitCount(slots) != 1 || buf.capacity() < bytes(slots, dataCapacity)) {
            throw new IllegalArgumentException("wire of " + slots + " slots and " + dataCapacity + " data bytes in "
                + buf.capacity() + " bytes");
        }
        Wire w = new Wire(buf, slots, dataCapacity);
        INTS.set(buf, SLOTS_OFF, slots);
        INTS.set(buf, DATA_CAP_OFF, dataCapacity);
        LONGS.set(buf, WITHDRAWN_OFF, -1L);
        INTS.setRelease(buf, MAGIC_OFF, MAGIC);
        return w;
    }

    /**
     * Reads a peer's wire, checking that its header describes a wire that fits the segment.
     *
     * @param buf the mapped segment
     * @return the wire
     * @throws VerbsException (EINVAL) when the segment is not a well-formed wire
     */
    static Wire attach(ByteBuffer buf) throws VerbsException {
        if (buf.capacity() < HEADER_BYTES) {
            throw new VerbsException(Errno.EINVAL, "peer wire segment of " + buf.capacity() + " bytes is too small");
        }
        int magic = (int) INTS.getAcquire(buf, MAGIC_OFF);
        int slots = (int) INTS.get(buf, SLOTS_OFF);
        int cap = (int) INTS.get(buf, DATA_CAP_OFF);
        if (magic != MAGIC || slots <= 0 || Integer.bitCount(slots) != 1 || slots > 1 << 20 || cap < 0
            || (long) HEADER_BYTES + (long) slots * (SLOT_BYTES + 8) + cap > buf.capacity()) {
            throw new VerbsException(Errno.EINVAL, "peer wire segment is malformed (magic 0x" + Integer.toHexString(magic)
                + ", " + slots + " slots, " + cap + " data bytes, " + buf.capacity() + " bytes mapped)");
        }
        return new Wire(buf, slots, cap);
    }

    int slots() {
        return slots;
    }

    int dataCapacity() {
        return dataCapacity;
    }

    ByteBuffer buffer() {
        return buf;
    }

    /** Byte offset of the slot of message {@code seq}. */
    int slot(long seq) {
        return HEADER_BYTES + ((int) seq & mask) * SLOT_BYTES;
    }

    /** Byte offset in the segment of data-area offset {@code dataOffset}. */
    int dataAt(int dataOffset) {
        return dataBase + dataOffset;
    }

    static long word(long seq, int code) {
        return seq << 8 | code;
    }

    private int answerAt(long seq) {
        return answerBase + ((int) seq & mask) * 8;
    }

    // ---------------------------------------------------------------- requester

    /**
     * The arrival stamp of a message published now on a wire of {@code latencyNs} (0 for none): never 0
     * when there is a latency.
     */
    static int arrivalStamp(long latencyNs) {
        if (latencyNs == 0) {
            return 0;
        }
        int a = (int) (System.nanoTime() + latencyNs);
        return a == 0 ? 1 : a;
    }

    /**
     * Writes a message's fields into its slot (the payload is already in place) and publishes it with
     * a volatile store, which also orders it before the caller's next volatile load (the doorbell
     * check).
     *
     * @param arrival {@link #arrivalStamp(long)}: when the responder may see it
     */
    void publish(long seq, int opcode, int flags, int length, int imm, int dataOffset, int arrival) {
        int s = slot(seq);
        INTS.set(buf, s + S_ARRIVE, arrival);
        INTS.set(buf, s + S_OPCODE, opcode);
        INTS.set(buf, s + S_FLAGS, flags);
        INTS.set(buf, s + S_LENGTH, length);
        INTS.set(buf, s + S_IMM, imm);
        INTS.set(buf, s + S_DATA, dataOffset);
        LONGS.setVolatile(buf, s, word(seq, CODE_PUBLISHED));
    }

    boolean responderWantsDoorbell() {
        return (int) INTS.getVolatile(buf, RESPONDER_WANTS_OFF) != 0;
    }

    void requesterWantsDoorbell(boolean on) {
        INTS.setVolatile(buf, REQUESTER_WANTS_OFF, on ? 1 : 0);
    }

    boolean responderSilent() {
        return (int) INTS.getAcquire(buf, SILENT_OFF) != 0;
    }

    /** Message {@code seq} must not be taken if it is not yet (volatile: ordered before the doorbell check). */
    void withdraw(long seq) {
        LONGS.setVolatile(buf, WITHDRAWN_OFF, seq);
    }

    /** The requester is in ERROR: the responder takes nothing more. */
    void close() {
        INTS.setVolatile(buf, CLOSED_OFF, 1);
    }

    /**
     * The responder's word for message {@code seq}: its code ({@link #CODE_RNR}, {@link #CODE_DONE},
     * {@link #CODE_CANCELLED}) in the low byte, the status code in the next, or 0 when it has said
     * nothing yet.
     */
    int answer(long seq) {
        long a = (long) LONGS.getAcquire(buf, answerAt(seq));
        return a >>> 16 == seq ? (int) a & 0xffff : 0;
    }

    /** {@link #peerDirect}: no thread of the owner waits on its direct doorbell. */
    static final int DIRECT_NONE = 0;
    /**
     * {@link #peerDirect}, in the low two bits: the owner's waiter was armed; the caller took the arm
     * and must ring (the wait's number in the other bits, {@link #directWait}).
     */
    static final int DIRECT_RING = 1;
    /** {@link #peerDirect}: the owner's waiter is awake in its wait loop and looks before it sleeps. */
    static final int DIRECT_PRESENT = 2;
    /** The word's state while the owner's waiter is armed for messages only (answers need no ring). */
    private static final int DIRECT_RING_MESSAGES = 3;
    /** The low two bits of the word and of a {@link #peerDirect} result: its state. */
    static final int DIRECT_STATE = 3;

    /** The number of the wait whose arm a {@link #peerDirect} result took (0 for none). */
    static int directWait(int peerDirect) {
        return peerDirect >>> 2;
    }

    /** The owner's thread holds its direct doorbell: it looks (arming first) before it sleeps. */
    void enterDirect() {
        INTS.setVolatile(buf, DIRECT_OFF, DIRECT_PRESENT);
    }

    /**
     * Arms the owner's direct doorbell for wait {@code wait}: the peer's next message or answer rings
     * it. A volatile store; the caller fences and looks at both wires afterwards (a Dekker pair with
     * {@link #peerDirect}).
     *
     * @param wait the wait's number, 30 bits ({@link io.jsdp.verbs.WakeChannel#newWait})
     */
    void armDirect(boolean answersToo, int wait) {
        INTS.setVolatile(buf, DIRECT_OFF, (answersToo ? DIRECT_RING : DIRECT_RING_MESSAGES) | wait << 2);
    }

    /**
     * Withdraws the owner's arm, unless a ringer took it already; the owner still holds the doorbell.
     *
     * @return true when a ringer took the arm (its ring may have gone to another channel of the wait)
     */
    boolean disarmDirect() {
        for (;;) {
            int w = (int) INTS.getVolatile(buf, DIRECT_OFF);
            int state = w & DIRECT_STATE;
            if (state != DIRECT_RING && state != DIRECT_RING_MESSAGES) {
                return w == DIRECT_PRESENT; // taken (the owner's arm is the only other way out of PRESENT)
            }
            if (INTS.compareAndSet(buf, DIRECT_OFF, w, DIRECT_PRESENT)) {
                return false;
            }
        }
    }

    /** Whether a thread of this process (the owner) holds its direct doorbell. */
    boolean directHeld() {
        return (int) INTS.getVolatile(buf, DIRECT_OFF) != DIRECT_NONE;
    }

    /** The owner's thread no longer waits: the peer rings the device's doorbell again where asked. */
    void leaveDirect() {
        INTS.setVolatile(buf, DIRECT_OFF, DIRECT_NONE);
    }

    // ---------------------------------------------------------------- responder

    /** Whether a thread of the owner (the peer) holds its direct doorbell: it looks before it sleeps. */
    boolean peerDirectHeld() {
        return (int) INTS.getVolatile(buf, DIRECT_OFF) != DIRECT_NONE;
    }

    /**
     * The owner's (the peer's) direct doorbell, after we published a message or ({@code answer})
     * answered one: {@link #DIRECT_RING} once per arm, for the one ringer that took it (an owner armed
     * for messages only is not rung for an answer); {@link #DIRECT_PRESENT} while its waiter is awake
     * and will look (nobody needs ringing); {@link #DIRECT_NONE} when no thread of it waits there.
     */
    int peerDirect(boolean answer) {
        int w = (int) INTS.getVolatile(buf, DIRECT_OFF);
        int state = w & DIRECT_STATE;
        if (state == DIRECT_RING || state == DIRECT_RING_MESSAGES && !answer) {
            return INTS.compareAndSet(buf, DIRECT_OFF, w, DIRECT_PRESENT) ? DIRECT_RING | w & ~DIRECT_STATE : DIRECT_PRESENT;
        }
        // armed for messages only and this is an answer: its next look finds it; any other value is a
        // malformed peer's, which gets the device's doorbell
        return w == DIRECT_PRESENT || state == DIRECT_RING_MESSAGES ? DIRECT_PRESENT : DIRECT_NONE;
    }


    void responderWantsDoorbell(boolean on) {
        INTS.setVolatile(buf, RESPONDER_WANTS_OFF, on ? 1 : 0);
    }

    boolean requesterWantsDoorbell() {
        return (int) INTS.getVolatile(buf, REQUESTER_WANTS_OFF) != 0;
    }

    void responderSilent(boolean silent) {
        INTS.setRelease(buf, SILENT_OFF, silent ? 1 : 0);
    }

    long withdrawn() {
        return (long) LONGS.getAcquire(buf, WITHDRAWN_OFF);
    }

    boolean requesterClosed() {
        return (int) INTS.getAcquire(buf, CLOSED_OFF) != 0;
    }

    /** Whether message {@code seq} is published (this lap's). */
    boolean published(long seq) {
        return (long) LONGS.getAcquire(buf, slot(seq)) == word(seq, CODE_PUBLISHED);
    }

    /**
     * How long until published message {@code seq} reaches us: 0 when it has (or was sent without
     * latency), else the nanoseconds left. A peer's stamp is only compared, so a bad one delays its own
     * message by at most 2^31 ns.
     */
    long arrivesInNs(long seq) {
        int a = (int) INTS.get(buf, slot(seq) + S_ARRIVE);
        if (a == 0) {
            return 0;
        }
        int left = a - (int) System.nanoTime();
        return left > 0 ? left : 0;
    }

    int opcode(long seq) {
        return (int) INTS.get(buf, slot(seq) + S_OPCODE);
    }

    int flags(long seq) {
        return (int) INTS.get(buf, slot(seq) + S_FLAGS);
    }

    int length(long seq) {
        return (int) INTS.get(buf, slot(seq) + S_LENGTH);
    }

    int imm(long seq) {
        return (int) INTS.get(buf, slot(seq) + S_IMM);
    }

    int dataOffset(long seq) {
        return (int) INTS.get(buf, slot(seq) + S_DATA);
    }

    /**
     * Where message {@code seq}'s payload of {@code length} bytes is in the segment, or -1 when the
     * slot's description does not fit (a malformed peer).
     */
    int payloadAt(long seq, int length) {
        if (length < 0) {
            return -1;
        }
        int d = dataOffset(seq);
        if (d == -1) {
            return length <= INLINE_MAX ? slot(seq) + S_INLINE : -1;
        }
        if (d < 0 || (long) d + length > dataCapacity) {
            return -1;
        }
        return dataAt(d);
    }

    /** Answers message {@code seq} with {@code code} and the requester's status (release). */
    void answer(long seq, int code, int status) {
        LONGS.setRelease(buf, answerAt(seq), seq << 16 | (status & 0xff) << 8 | code);
    }

    /**
     * Marks message {@code seq} RNR with a volatile store: ordered before the caller's next look at
     * its receive queue (the handshake with a poster, who publishes a receive and then reads the mark).
     */
    void markRnr(long seq) {
        LONGS.setVolatile(buf, answerAt(seq), seq << 16 | CODE_RNR);
    }
}
