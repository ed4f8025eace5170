package io.jsdp.flow.engine;

import static io.jsdp.flow.engine.SdpStack.TRACE;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.credit.CreditFlowControl;
import io.jsdp.flow.packetized.PacketizedFlowControl;
import io.jsdp.flow.wire.Bsdh;
import io.jsdp.flow.wire.Hello;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.flow.wire.RingMessages;
import io.jsdp.flow.wire.RdmaComplHeader;
import io.jsdp.flow.wire.SinkAvailHeader;
import io.jsdp.flow.wire.SrcAvailHeader;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.StructureMarkers;
import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One SDP connection: a TCP-like byte stream over a reliable-connected queue pair with buffer-copy
 * data transfer and credit-based flow control ({@code docs/protocol.md}).
 *
 * <h2>API</h2>
 * Non-blocking {@link #read} and {@link #write} return counts or negative status codes
 * ({@link #EOF}, {@link #FAILED}, {@link #CLOSED}, {@link #OUTPUT_SHUT}), never throw, and allocate
 * nothing; {@link #readyOps()} and a {@link ReadinessListener} report readiness; {@link #await} blocks
 * (spinning for {@link SdpOptions#spinNs()}, then parking — never in a monitor or native wait, so
 * virtual threads keep their carriers). The engine knows nothing of NIO: the provider maps the codes
 * and {@link #failure()} to the JDK's exceptions.
 *
 * <h2>Memory</h2>
 * One device-memory block per connection, registered once:
 * {@code [marker, then R × (receive buffer B, marker)][send slots S × B][control slots C × 256][notification slots S × 256]
 * [NIC-assisted: device-message header slots D × 64]},
 * markers 8 bytes, the send slots from the next 64-byte boundary; and, when this side asks for
 * a ring scheme (packetized, NIC-assisted), a second block {@code [marker, ring R × B, marker]}: the receive ring the peer
 * RDMA-writes into (the whole block registered for remote write, the ring between the markers advertised
 * in the Hello or HelloAck). The ring's markers are checked when a RingData arrives and before a read
 * takes bytes out of the ring; a broken one aborts the connection ({@link Failure#CORRUPTION}, FFDC
 * {@code corruption.RING}): a peer's write that runs over either end of the ring lands on one.
 * A message occupies one receive buffer until the application has read all of it; then the buffer is
 * reposted. The receive buffers have {@link StructureMarkers} between them (seed 000 5.1.4), checked
 * when a message arrives in a buffer and before it is read: a broken marker aborts the connection
 * ({@link Failure#CORRUPTION}, FFDC {@code corruption.RECEIVE_BUFFER}) instead of handing on bytes from
 * overwritten memory. A write copies
 * into the open send slot; a slot goes on the wire as one message when it is full, or — partly full —
 * when nothing else of ours is in flight or {@code TCP_NODELAY} is set (Nagle's rule with the send
 * completion standing in for the ACK), and only while the peer has credits.
 *
 * <h2>Flow-control schemes</h2>
 * The Hello/HelloAck exchange picks the {@link FlowControl} strategy ({@link FlowControlScheme}); until
 * then the connection counts credits. The strategy decides; the engine moves the bytes, on one of two
 * data paths: <em>slots</em> (credit-based: each Data message is a SEND of one slot) or the
 * <em>ring</em> (packetized and NIC-assisted: the send slots form one byte ring whose runs are
 * RDMA-written into the peer's ring, announced by RingData SENDs — one in flight at a time, each
 * covering every WRITE since the last; received bytes are read straight out of our ring). When the
 * peer's ring is full, NIC-assisted posts up to {@link FlowControl#deviceMessages()} Data SENDs of the
 * send ring's bytes, which the device holds until the peer posts a buffer; the reader takes ring bytes
 * and such messages in stream order.
 * A strategy whose data must not move without the application ({@link FlowControl#movesDataWithoutApplication()})
 * gets no data posted by the progress thread unless the application waits on the connection or closed it.
 *
 * <h2>Threads and locking</h2>
 * Every field below the lock banner is guarded by {@link #lock} (a {@link ReentrantLock}: waiters
 * park). The application's reader and writer, the stack's progress thread (armed completion events),
 * its CM thread and its timer all take it briefly; nobody blocks while holding it except in
 * {@link Condition#awaitNanos}, which releases it. Release it only through {@code unlock()} or
 * {@code unlockAndNotify()}, never a bare {@code lock.unlock()}: the progress thread leaves a
 * completion event to the holder of a busy lock ({@code eventPending}), and those two handle it.
 * Waking a parked waiter on an asynchronous close: the close moves the queue pair to ERROR, whose
 * flush completions fire the armed queue.
 */
public final class SdpConnection {
    /** {@link #read} status: the peer shut its output down and every byte was read. */
    public static final int EOF = -1;
    /** {@link #read}/{@link #write} status: the connection failed; see {@link #failure()}. */
    public static final int FAILED = -2;
    /** {@link #read}/{@link #write} status: this side closed the connection. */
    public static final int CLOSED = -3;
    /** {@link #write} status: this side shut its output down. */
    public static final int OUTPUT_SHUT = -4;

    /**
     * {@link #write(ByteBuffer, int)} flag: the caller is a blocking writer that calls again with the
     * same buffer until it is consumed and does not touch the buffer meanwhile, so a direct buffer at or
     * above the zero-copy threshold may be read by the peer in place ({@link LargeTransfers}).
     * {@link #read(ByteBuffer, int)} flag: the caller is a blocking reader that calls again with the same
     * buffer until the read returns (or withdraws it with {@link #cancelRead}), so the peer may
     * RDMA-write into it (SinkAvail).
     */
    public static final int HOLDS_BUFFER = 1;

    /** Ready: {@link #read} would return data, EOF or a failure. */
    public static final int OP_READ = 1;
    /** Ready: {@link #write} would accept bytes or return a failure. */
    public static final int OP_WRITE = 1 << 2;
    /** Ready: the connect finished, well or not. */
    public static final int OP_CONNECT = 1 << 3;
    /** Ready: both directions ended (graceful or failed) and nothing is left to read. */
    public static final int OP_ENDED = 1 << 4;

    /** Connection states; each move goes through {@code transition} and is traced. */
    public enum State {
        /** Connection manager at work (address, route, connect / accept). */
        CONNECTING,
        /** The queue pair is up; Hello/HelloAck not exchanged yet. */
        HANDSHAKE,
        /** Data may flow. Half-closes are flags on top of it. */
        ESTABLISHED,
        /** Both DisConns exchanged: graceful end (unread data may remain for the application). */
        FINISHED,
        /** Failed or aborted; see {@link SdpConnection#failure()}. */
        FAILED
    }

    static final int CTRL_SLOTS = 4;
    static final int CTRL_SLOT_BYTES = 256;
    private static final int INLINE_LIMIT = 256;
    private static final long KIND_SHIFT = 40;
    private static final long KIND_RECV = 1L << KIND_SHIFT;
    private static final long KIND_DATA = 2L << KIND_SHIFT;
    private static final long KIND_CTRL = 3L << KIND_SHIFT;
    private static final long KIND_KEEPALIVE = 4L << KIND_SHIFT;
    /** Work requests of zero copy (RDMA READ): the index is the {@link LargeTransfers} tag. */
    private static final long KIND_ZCOPY = 5L << KIND_SHIFT;
    /** Send-queue entries zero copy may use beyond the slots (its RDMA READs). */
    private static final int ZCOPY_WRS = 2;
    /** Packetized: an RDMA WRITE into the peer's ring (unsignaled: completes only on error). */
    private static final long KIND_RING_WRITE = 6L << KIND_SHIFT;
    /** Packetized: a RingData notification; the index is its notification slot. */
    private static final long KIND_NOTE = 7L << KIND_SHIFT;
    /** NIC-assisted: a Data message beyond the ring, held by the device; the index is its header slot. */
    private static final long KIND_DEVICE = 8L << KIND_SHIFT;
    /** NIC-assisted: a device message's header slot (its BSDH; the payload is gathered from the send ring). */
    private static final int DEVICE_SLOT_BYTES = 64;
    /** A notification slot: a RingData and the run it may carry inline (at most {@link #INLINE_LIMIT} bytes in all). */
    static final int NOTE_SLOT_BYTES = INLINE_LIMIT;
    /** Packetized: where our ring starts in its memory block, after its leading structure marker. */
    static final int RING_BASE = StructureMarkers.MARKER_BYTES;
    /** First wait of the idle check before a solicited-only arm ({@link #solicitedArmWhenIdleLocked}). */
    static final long IDLE_CHECK_MIN_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Longest wait between idle checks while the application keeps polling. */
    static final long IDLE_CHECK_MAX_NS = TimeUnit.MILLISECONDS.toNanos(32);
    /** The longest an abortive close waits for its AbortConn to reach the peer before it disconnects. */
    private static final long ABORT_SEND_NS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long INDEX_MASK = (1L << KIND_SHIFT) - 1;
    private static final AtomicLong IDS = new AtomicLong();

    // ---- immutable after construction
    private final long connectionId = IDS.incrementAndGet();
    private final SdpStack stack;
    private final CmId cmId;
    private final boolean active;
    private final SdpOptions options;
    /** How long this connection's waits spin, from how they ended lately (the waiting threads'). */
    private final SpinWindow spin;
    private final SpinGovernor governor = SpinGovernor.jvm();
    private final int bufferBytes;
    private final int recvCount;
    private final int sendCount;
    private final int sendBase;
    private final int ctrlBase;
    private final int noteBase;
    /** NIC-assisted (wished): the device messages' header slots, and how many (the device-handled part). */
    private final int deviceBase;
    private final int deviceCount;
    /** The scheme this side asks for. */
    private final FlowControlScheme wish;
    /** Packetized or NIC-assisted (wished): our receive ring, its own memory registered for remote write; else null. */
    private final DeviceMemory ringMemory;
    private final MemoryRegion ringMr;
    private final ByteBuffer ringMem;
    private final int ringBytes;
    /** Packetized and NIC-assisted: the send slots as one byte ring. */
    private final int sendRingBytes;
    private final CompletionQueue cq;
    private final DeviceMemory memory;
    private final MemoryRegion mr;
    private final long mrAddress;
    private final int lkey;
    private final int maxInline;
    private final ByteBuffer mem;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /**
     * The selector of a platform thread waiting on this connection's {@link io.jsdp.verbs.WakeChannel}
     * ({@link #directWaitLocked}), which {@link #signalAllLocked} wakes; guarded by lock.
     */
    private java.nio.channels.Selector directWaiter;
    /** The claiming thread's selector, between {@link #directClaimLocked} and {@link #directWaitLocked}. */
    private java.nio.channels.Selector directSelector;
    private final WorkCompletion[] wcs = new WorkCompletion[16];
    private final SendWorkRequest swr = new SendWorkRequest(1);
    /** NIC-assisted device messages: the header and up to two pieces of the send ring. */
    private final SendWorkRequest gather = new SendWorkRequest(3);
    private final ReceiveWorkRequest rwr = new ReceiveWorkRequest(1);
    private final Bsdh bsdh = new Bsdh();
    private volatile ReadinessListener listener;
    private final LargeTransfers.Factory largeFactory;
    private final SrcAvailHeader srcAh = new SrcAvailHeader();
    private final SinkAvailHeader sinkAh = new SinkAvailHeader();
    private final RdmaComplHeader complH = new RdmaComplHeader();

    // ---- guarded by lock
    /** Credits until the handshake, then the negotiated scheme's strategy. */
    private FlowControl fc = new CreditFlowControl();
    /** The strategy when a ring scheme (packetized, NIC-assisted) was negotiated, else null: the ring data path is on. */
    private PacketizedFlowControl ring;
    private boolean schemeChosen;
    /** The Hello's bufs (active side), replayed into the strategy the HelloAck picks. */
    private int helloBufs;
    /** Packetized send side: stream bytes copied in, posted (RDMA-written), freed (notification done). */
    private long streamWritten;
    private long streamPosted;
    private long streamFreed;
    /** Packetized: stream bytes a posted RingData announced; RDMA WRITEs posted since the last RingData. */
    private long streamAnnounced;
    private int unannouncedWrites;
    private final long[] noteEnd;
    private long notePosted;
    private long noteCompleted;
    private long peerRingAddress;
    private int peerRingRkey;
    /**
     * NIC-assisted: Data messages posted beyond the ring (the device holds each until the peer posts a
     * buffer) and not completed, the stream position each ends at, and how many were posted in all.
     */
    private int deviceOutstanding;
    private final long[] deviceEnd;
    private long devicePosted;
    /** Set while a stack thread (progress, CM, timer) runs this connection: not the application. */
    private boolean stackContext;
    private State state = State.CONNECTING;
    private Failure failure;
    private String failureDetail;
    private QueuePair qp;
    private boolean released;
    /** Holds an admission of the stack's {@link ConnectionLimits}, given back at release; guarded by lock. */
    private boolean admitted;
    /** Holds a set-up slot of the stack's {@link ConnectionLimits}, given back when the handshake ends; guarded by lock. */
    private boolean settingUp;
    private boolean cqClosed;
    private SdpListener owner;
    /** The owning listener must hear that the handshake ended (well or not); told after unlock. */
    private boolean pendingOwnerNotice;
    private InetSocketAddress remote;
    private ScheduledFuture<?> connectTimer;
    private ScheduledFuture<?> closeTimer;
    private ScheduledFuture<?> keepAliveTimer;
    private int peerBufferBytes;
    /** The peer's receive buffers (its Hello/HelloAck bufs), the bufs and mseq_ack of its latest message. */
    private int peerCapacity;
    private int lastPeerBufs;
    private int lastPeerAck = -1;
    /** The mseq of our latest Data message, -1 before any. */
    private int lastDataMseq = -1;
    /** The peer died after reading everything: reads end with EOF, writes fail with a reset (as TCP). */
    private boolean peerGone;
    /**
     * The peer reset the connection (AbortConn, or it vanished) while data it had sent was still unread
     * here: as Linux TCP, reads give that data first and then the reset ({@link #failure} says which).
     */
    private boolean resetAfterUnread;
    private int goal;
    /** Application flags. */
    private boolean appClosed;
    private boolean inputShut;
    private boolean outputShut;
    private boolean disconnSent;
    private boolean disconnSendDone;
    private boolean disconnReceived;
    /** Sequence numbers: the next we send, the last we received. */
    private int nextMseq;
    private int lastRecvMseq = -1;
    /** Receive side: posted count; the FIFO of buffers holding unread data; read offset in the head. */
    private int posted;
    private final int[] unread;
    private final int[] unreadLen;
    private long unreadHead;
    private long unreadTail;
    private int headOffset;
    private long unreadBytes;
    /** Per unread message: bytes of extended header before its payload (SrcAvail's SrcAH). */
    private final int[] unreadSkip;
    /** Per unread message: a SrcAvail's remote part follows its inline bytes in the stream. */
    private final boolean[] unreadRemote;
    /**
     * NIC-assisted, per unread message: the ring bytes announced before it and not read yet, which the
     * reader takes first; their sum over the queued messages. Ring bytes beyond that sum follow the last
     * queued message (with none queued: all of the ring comes next).
     */
    private final long[] unreadRingBefore;
    private long ringQueued;
    /** The reader is at a SrcAvail's remote part ({@link LargeTransfers#readRemote}). */
    private boolean remoteAtHead;
    /** Zero copy of this connection, when the handshake negotiated it. */
    private LargeTransfers large;
    /** Send side: slots posted / completed / the open slot and its fill. */
    private long slotPosted;
    private long slotCompleted;
    private long slotOpen;
    private int openBytes;
    /**
     * Credit-based without coalescing ({@link SdpOptions#creditCoalesce()} false, seed 001 §4.1.1): each
     * write closes its last slot, and no write takes bytes while a closed slot waits for credits.
     */
    private boolean messagePerWrite;
    private final int[] slotLen;
    private long ctrlPosted;
    private long ctrlCompleted;
    private boolean keepAliveOutstanding;
    private long activity;
    private long activityAtLastProbe;
    /**
     * Threads parked in {@code changed.awaitNanos} or about to park: written under the lock, read
     * without it by the progress thread ({@link #onCompletionEvent}), hence volatile.
     */
    private volatile int waiters;
    /** Waits on the queue pair's wake channel ({@link #directWaitLocked}); guarded by lock. */
    private long directWaits;
    /**
     * A completion event the progress thread left to the lock's holder because the lock was busy: set
     * by the progress thread, cleared under the lock by whoever handles it — the holder right after it
     * unlocks ({@link #unlock()}, {@link #unlockAndNotify()}) or before it arms ({@link #armLocked()}).
     * Without this hand-off the progress thread queued on the lock behind spinning application threads,
     * and with 2 CPUs and two spinners every unlock unparked it onto a CPU a spinner needed (issue 7:
     * round trips at 0.1–4 ms instead of ~1 µs, stream iterations at 1–4 k writes/s).
     */
    private volatile boolean eventPending;
    /** Armed and its event not yet handled by {@link #onCompletionEvent}: arming again adds nothing. */
    private boolean cqArmed;
    /** The arm is for solicited events only ({@link #armSolicitedLocked}): a waiter widens it. */
    private boolean cqArmedSolicited;
    /** Polls of the completion queue in the application's calls (not the stack's): how idleness is seen. */
    private long appPolls;
    /** {@link #appPolls} when the pending idle check was scheduled; the check's delay (doubling). */
    private long idleCheckPolls;
    private long idleCheckNs;
    private boolean idleCheckPending;
    /** Counters for snapshots and statistics. */
    private long bytesSent;
    private long bytesReceived;
    private long messagesSent;
    private long messagesReceived;
    private long creditStalls;
    /**
     * Credit stalls: one begins when a write takes nothing because flow control allows no message, and
     * ends when it allows one again. Nanoseconds of ended stalls; the current one began at stallStartNs.
     */
    private long creditStallNs;
    /** The queue pair's RNR retries when last read; final once released (the queue pair is gone then). */
    private long rnrRetries;
    private boolean stalled;
    private long stallStartNs;
    /** The JFR event of the current stall, when a recording wants it. */
    private io.jsdp.flow.events.CreditStallEvent stallEvent;
    private int lastNotifiedOps = -1;
    /**
     * How often an event of the zero-copy transfers ended the last one holding an application's
     * buffer ({@link LargeTransfers#holdsOutput()} went false): the listener hears of each even when
     * the ready operations are the same as when last told — a write that advertised a buffer and, still
     * holding the lock, took the peer's report that it was read turned OP_WRITE off and on again, and the
     * buffer waits for the application's next write to be settled.
     */
    private long heldReleases;
    private long lastNotifiedHeldReleases;
    /** Capability bits both sides use (the HelloAck's). */
    private int negotiated;
    /** The peer's {@code max_adverts}: SrcAvails it accepts outstanding. */
    private int peerMaxAdverts = 1;
    /** The reader asked zero copy about the SrcAvail at the head of the unread FIFO. */
    private boolean headAdvertChecked;
    /** TCP_NODELAY, changeable at run time. */
    private boolean noDelay;

    SdpConnection(SdpStack stack, CmId cmId, boolean active, SdpOptions options) throws VerbsException {
        this.stack = stack;
        this.cmId = cmId;
        this.active = active;
        this.options = options;
        this.spin = new SpinWindow(options.spinNs());
        this.bufferBytes = options.bufferBytes();
        this.recvCount = options.receiveBuffers();
        this.sendCount = options.sendBuffers();
        this.sendBase = (StructureMarkers.regionBytes(recvCount, bufferBytes) + 63) & ~63; // send slots on a cache line
        this.ctrlBase = sendBase + sendCount * bufferBytes;
        this.noteBase = ctrlBase + CTRL_SLOTS * CTRL_SLOT_BYTES;
        this.wish = options.flowControl();
        this.deviceBase = noteBase + sendCount * NOTE_SLOT_BYTES;
        this.deviceCount = wish == FlowControlScheme.NIC ? options.deviceMessages() : 0;
        this.deviceEnd = new long[deviceCount];
        this.sendRingBytes = sendCount * bufferBytes;
        this.noteEnd = new long[sendCount];
        this.unread = new int[recvCount];
        this.unreadLen = new int[recvCount];
        this.unreadSkip = new int[recvCount];
        this.unreadRemote = new boolean[recvCount];
        this.unreadRingBefore = new long[recvCount];
        this.largeFactory = stack.largeTransfers();
        this.slotLen = new int[sendCount];
        this.noDelay = options.noDelay();
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        RdmaDevice device = stack.device();
        this.maxInline = Math.min(INLINE_LIMIT, device.capabilities().maxInlineData());
        CompletionQueue q = null;
        DeviceMemory m = null;
        MemoryRegion r = null;
        DeviceMemory rm = null;
        MemoryRegion rr = null;
        try {
            q = device.createCompletionQueue(stack.completionChannel(), recvCount + maxSendWr() + 4);
            m = device.allocateMemory(deviceBase + deviceCount * DEVICE_SLOT_BYTES);
            r = stack.pd().register(m.buffer(), Access.LOCAL_WRITE);
            if (wish.usesRing()) {
                rm = device.allocateMemory(StructureMarkers.regionBytes(1, recvCount * bufferBytes));
                rr = stack.pd().register(rm.buffer(), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            }
        } catch (VerbsException | RuntimeException e) {
            if (rr != null) {
                rr.close();
            }
            if (rm != null) {
                rm.close();
            }
            if (r != null) {
                r.close();
            }
            if (m != null) {
                m.close();
            }
            if (q != null) {
                q.close();
            }
            throw e;
        }
        this.cq = q;
        this.memory = m;
        this.mr = r;
        this.mrAddress = r.address();
        this.lkey = r.lkey();
        this.mem = m.buffer();
        this.ringMemory = rm;
        this.ringMr = rr;
        this.ringMem = rm == null ? null : rm.buffer();
        this.ringBytes = rm == null ? 0 : recvCount * bufferBytes;
        if (rm != null) {
            StructureMarkers.place(ringMem, 0, 1, ringBytes);
        }
        StructureMarkers.place(mem, 0, recvCount, bufferBytes);
        bsdh.wrap(mem, 0);
        stack.register(cq, this);
        stack.register(cmId, this::onCmEvent);
        stack.statistics().onOpened();
    }

    // ------------------------------------------------------------------ set-up

    /**
     * Send work requests: per slot one message; the ring schemes: the WRITEs posted since the last
     * RingData (at most the send slots' count, plus two of a wrapping run) and the RingData in flight with
     * its WRITEs, and NIC-assisted's device messages.
     */
    private int maxSendWr() {
        return (wish.usesRing() ? 4 * sendCount + deviceCount : sendCount) + CTRL_SLOTS + 2 + ZCOPY_WRS;
    }

    /** NIC-assisted needs the device to hold a send until the peer posts a buffer: RNR retry "forever". */
    private int rnrRetry() {
        return wish == FlowControlScheme.NIC ? ConnectionParameters.RNR_RETRY_INFINITE : 0;
    }

    void startConnect(InetSocketAddress destination, InetSocketAddress source) {
        lock.lock();
        try {
            remote = destination;
            connectTimer = stack.schedule(this::onConnectTimeout, TimeUnit.MILLISECONDS.toNanos(options.connectTimeoutMs()));
            cmId.resolveAddress(source, destination, Math.min(options.connectTimeoutMs(), 2_000));
        } catch (VerbsException e) {
            failLocked(Failure.UNREACHABLE, "resolve " + destination + ": " + e.getMessage(), false, false);
        } finally {
            unlockAndNotify();
        }
    }

    /** Passive side: create the queue pair on the request's id, post receives and accept. */
    boolean startAccept(SdpListener listener) {
        lock.lock();
        try {
            owner = listener;
            remote = cmId.remoteAddress();
            connectTimer = stack.schedule(this::onConnectTimeout, TimeUnit.MILLISECONDS.toNanos(options.connectTimeoutMs()));
            createQueuePairLocked();
            armLocked();
            cmId.accept(new ConnectionParameters().retryCount(5).rnrRetryCount(rnrRetry()));
            return true;
        } catch (VerbsException e) {
            failLocked(Failure.DEVICE_ERROR, "accept: " + e.getMessage(), false, true);
            return false;
        } finally {
            unlockAndNotify();
        }
    }

    private void createQueuePairLocked() throws VerbsException {
        QueuePairAttributes attrs = new QueuePairAttributes().sendCq(cq).recvCq(cq)
            .maxSendWr(maxSendWr()).maxRecvWr(recvCount).maxSendSge(deviceCount > 0 ? 3 : 1).maxRecvSge(1)
            .maxInlineData(maxInline);
        qp = cmId.createQueuePair(stack.pd(), attrs);
        for (int i = 0; i < recvCount; i++) {
            if (!postReceiveLocked(i)) {
                throw new VerbsException(Errno.ENOMEM, "cannot post receive " + i);
            }
        }
    }

    private void onCmEvent(CmEvent e) {
        lock.lock();
        stackContext = true;
        try {
            if (released) {
                return;
            }
            switch (e.type()) {
                case ADDR_RESOLVED -> cmId.resolveRoute(Math.min(options.connectTimeoutMs(), 2_000));
                case ROUTE_RESOLVED -> {
                    createQueuePairLocked();
                    cmId.connect(new ConnectionParameters().retryCount(5).rnrRetryCount(rnrRetry())
                        .connectTimeoutMs(options.connectTimeoutMs()));
                }
                case ESTABLISHED -> onEstablishedLocked();
                case REJECTED -> {
                    RejectReason why = RejectReason.of(e.privateData());
                    if (why != null) {
                        failLocked(Failure.PEER_BUSY, "the SDP listener at " + remote + " refused: " + why.text(), false, false);
                    } else {
                        failLocked(Failure.CONNECTION_REFUSED, "rejected by " + remote + " (status " + e.status() + ")",
                            false, false);
                    }
                }
                case UNREACHABLE -> failLocked(Failure.CONNECT_TIMEOUT, "no answer from " + remote, false, false);
                case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR -> failLocked(Failure.UNREACHABLE, e.type() + " for "
                    + remote + " (status " + e.status() + ")", false, false);
                case DISCONNECTED -> onDisconnectedLocked();
                default -> {
                    // TIMEWAIT_EXIT and the like carry nothing for the stream
                }
            }
        } catch (VerbsException ex) {
            failLocked(active ? Failure.UNREACHABLE : Failure.DEVICE_ERROR, e.type() + ": " + ex.getMessage(), false, true);
        } catch (InternalError fault) {
            memoryFaultLocked(fault);
        } finally {
            stackContext = false;
            unlockAndNotify();
        }
    }

    private void onEstablishedLocked() {
        if (state != State.CONNECTING) {
            return;
        }
        transition(State.HANDSHAKE);
        if (active) {
            // In-band Hello (sdp-wire.md C.7): our first SEND, mseq 0, our posted receives in bufs.
            int off = ctrlSlotOffset();
            Hello hello = new Hello().wrap(bsdh.buffer(), off).put(ownMaxAdverts(), bufferBytes, cmId.localAddress(), remote,
                offeredCapabilities() | wish.capabilityBit()
                    | (wish.usesRing() ? FlowControlScheme.CAPABILITY_RING_INLINE : 0));
            if (ringMr != null) {
                hello.putRing(ringMr.address() + RING_BASE, ringMr.rkey(), ringBytes);
            }
            postControlLocked(MessageId.HELLO, Hello.LENGTH, -1);
        }
        armLocked();
    }

    private void onConnectTimeout() {
        lock.lock();
        try {
            if (state == State.CONNECTING || state == State.HANDSHAKE) {
                failLocked(Failure.CONNECT_TIMEOUT, "not established within " + options.connectTimeoutMs() + " ms (state "
                    + state + ")", true, !active || state == State.HANDSHAKE);
            }
        } finally {
            unlockAndNotify();
        }
    }

    // ------------------------------------------------------------------ application API

    /**
     * Reads into {@code dst} what has arrived, without blocking.
     *
     * @param dst where to put the bytes (its position advances)
     * @return bytes read (0 when nothing is there yet or {@code dst} is full), {@link #EOF},
     *     {@link #FAILED} or {@link #CLOSED}
     */
    public int read(ByteBuffer dst) {
        return read(dst, 0);
    }

    /**
     * Reads as {@link #read(ByteBuffer)} does; with {@link #HOLDS_BUFFER}, when nothing is there to read,
     * a buffer from the stack's device memory with at least {@link SdpOptions#zcopyThreshold()} bytes
     * remaining may be advertised to the peer, which then RDMA-writes the next bytes of the stream into
     * it (SinkAvail, {@code docs/protocol.md} section 9): the caller must call again with the same,
     * untouched buffer until the read returns bytes, EOF or a failure — or call {@link #cancelRead} before
     * it leaves without data.
     *
     * @param dst where to put the bytes (its position advances)
     * @param flags 0 or {@link #HOLDS_BUFFER}
     * @return bytes read, {@link #EOF}, {@link #FAILED} or {@link #CLOSED}
     */
    public int read(ByteBuffer dst, int flags) {
        lock.lock();
        try {
            return readLocked(dst, flags);
        } catch (InternalError e) {
            memoryFaultLocked(e);
            return FAILED;
        } finally {
            unlockAndNotify();
        }
    }

    private int readLocked(ByteBuffer dst, int flags) {
        if (appClosed) {
            return CLOSED;
        }
        if (state == State.FAILED) {
            return FAILED;
        }
        if (inputShut) {
            if (large != null && !released && large.sinkBufferOut() && withdrawSinkLocked(dst) == FAILED) {
                return FAILED; // the peer may write the buffer until it answers the cancel
            }
            return EOF;
        }
        progressLocked();
        if (state == State.FAILED) {
            return FAILED;
        }
        // bytes the peer RDMA-wrote into an advertised buffer come before anything queued since
        int n = large == null ? 0 : large.takeWritten(dst);
        if (n == 0) {
            n = copyOutLocked(dst);
        }
        if (n == 0 && state == State.FAILED) {
            return FAILED; // a broken structure marker found before the read
        }
        if (n > 0) {
            transmitLocked();
            maybeReleaseLocked();
            return n;
        }
        if (state == State.FAILED) {
            return FAILED; // failed while a zero-copy read waited
        }
        if (!hasUnreadLocked() && (disconnReceived || state == State.FINISHED)) {
            maybeReleaseLocked();
            return resetAfterUnread ? FAILED : EOF;
        }
        if ((flags & HOLDS_BUFFER) != 0 && large != null && state == State.ESTABLISHED && !hasUnreadLocked()
            && dst.hasRemaining()) {
            large.advertiseSink(dst); // SinkAvail: the peer may write the next bytes straight into dst
            if (large.hasPendingOutput()) {
                armLocked();
            }
        }
        return 0;
    }

    /**
     * A blocking reader that called {@link #read(ByteBuffer, int)} with {@link #HOLDS_BUFFER} leaves
     * without data (its timeout ran out): when its buffer is advertised to the peer, a SinkAvailCancel
     * withdraws it and this waits for the answer (at most the zero-copy cancel timeout, after which the
     * connection is reset), so the peer writes the buffer no more once this returns.
     *
     * @param dst the buffer the reader held
     * @return bytes the peer wrote into {@code dst} before it saw the cancel (the read returns them
     *     instead of timing out), 0 when nothing came, {@link #FAILED} or {@link #CLOSED}
     */
    public int cancelRead(ByteBuffer dst) {
        lock.lock();
        try {
            if (appClosed) {
                return CLOSED;
            }
            if (state == State.FAILED) {
                return FAILED;
            }
            if (large == null || released) {
                return 0;
            }
            progressLocked();
            int n = withdrawSinkLocked(dst);
            if (n > 0) {
                transmitLocked();
            }
            return n;
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * Waits until the peer may no longer write the reader's advertised buffer: SinkAvailCancel, then its
     * answer (or an RdmaWrCompl that crossed it). The wait polls, then parks; the cancel's own timer
     * (zcopy) resets the connection when the peer does not answer, which ends it.
     *
     * @return bytes written into {@code dst} meanwhile, 0, or {@link #FAILED}
     */
    private int withdrawSinkLocked(ByteBuffer dst) {
        long now = System.nanoTime();
        long spinUntil = now + (governor.mayStart(now) ? spin.maxNs() : 0);
        boolean interrupted = false;
        try {
            for (;;) {
                if (state == State.FAILED || released) {
                    return FAILED;
                }
                int r = large.withdrawSink(dst);
                if (r != LargeTransfers.IN_PROGRESS) {
                    return r;
                }
                if (System.nanoTime() - spinUntil < 0) {
                    Thread.onSpinWait();
                    progressLocked();
                    continue;
                }
                waiters++; // before arming: the progress thread must not leave the event to us (onCompletionEvent)
                try {
                    if (armLocked()) {
                        changed.awaitNanos(TimeUnit.MILLISECONDS.toNanos(10));
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // the peer may write the buffer until it answers: wait on
                } finally {
                    waiters--;
                }
                progressLocked();
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Whether received data waits for the reader: messages in receive buffers, or bytes in our ring. */
    private boolean hasUnreadLocked() {
        return unreadHead != unreadTail || remoteAtHead || ring != null && ring.unread() > 0
            || large != null && large.writtenBytes() > 0;
    }

    private int copyOutLocked(ByteBuffer dst) {
        if (ring != null && unreadHead == unreadTail) {
            return Math.max(0, copyOutOfRingLocked(dst, ring.unread())); // no message of NIC-assisted's device waits
        }
        int total = 0;
        int copied = 0;
        while ((remoteAtHead || unreadHead != unreadTail) && dst.hasRemaining()) {
            int head = (int) (unreadHead % recvCount);
            if (ring != null && unreadRingBefore[head] > 0) {
                // NIC-assisted: ring bytes announced before the message at the head come first
                int r = copyOutOfRingLocked(dst, unreadRingBefore[head]);
                if (r < 0) {
                    return total;
                }
                unreadRingBefore[head] -= r;
                ringQueued -= r;
                total += r;
                continue;
            }
            if (remoteAtHead) {
                if (peerGone) {
                    // the rest of the stream is in the memory of a peer that reset or vanished: no READ can fetch it
                    failLocked(Failure.RESET_BY_PEER, "the peer went away with " + large.remoteBytes()
                        + " bytes of its SrcAvail not read yet (" + failureDetail + ")", false, true);
                    break;
                }
                int r = readRemoteLocked(dst);
                if (r < 0) {
                    break; // failed meanwhile: the FIFO is gone
                }
                total += r;
                if (large.remoteLeft()) {
                    break; // dst is full
                }
                remoteAtHead = false;
                continue;
            }
            int slot = (int) (unreadHead % recvCount);
            int buf = unread[slot];
            if (unreadRemote[slot] && !headAdvertChecked) {
                headAdvertChecked = true;
                if (large.startAdvert()) {
                    // discarded after a refusal of an earlier SrcAvail: its bytes come again as Data
                    unreadBytes -= unreadLen[slot] - headOffset;
                    unreadHead++;
                    headOffset = 0;
                    headAdvertChecked = false;
                    if (!postReceiveLocked(buf)) {
                        break;
                    }
                    continue;
                }
            }
            int left = unreadLen[slot] - headOffset;
            int n = Math.min(left, dst.remaining());
            if (!StructureMarkers.checkAround(mem, 0, buf, bufferBytes)) {
                corruptionLocked(buf, "before a read");
                return total;
            }
            int from = recvOffset(buf) + Bsdh.LENGTH + unreadSkip[slot] + headOffset;
            dst.put(dst.position(), mem, from, n);
            dst.position(dst.position() + n);
            total += n;
            copied += n;
            headOffset += n;
            if (headOffset == unreadLen[slot]) {
                unreadHead++;
                headOffset = 0;
                headAdvertChecked = false;
                remoteAtHead = unreadRemote[slot];
                if (!postReceiveLocked(buf)) {
                    break;
                }
            }
        }
        if (state != State.FAILED) {
            unreadBytes -= copied;
        }
        if (ring != null && unreadHead == unreadTail && dst.hasRemaining() && state != State.FAILED) {
            int r = copyOutOfRingLocked(dst, ring.unread()); // the ring bytes after the last device message
            total += Math.max(r, 0);
        }
        return total;
    }

    /**
     * The ring schemes: reads at most {@code limit} bytes straight out of our ring (at most two pieces:
     * the run may wrap round its end), after checking the ring's structure markers.
     *
     * @return bytes read, or -1 when the ring was found broken (the connection failed)
     */
    private int copyOutOfRingLocked(ByteBuffer dst, long limit) {
        int total = 0;
        if (limit > 0 && dst.hasRemaining() && !StructureMarkers.checkAround(ringMem, 0, 0, ringBytes)) {
            ringCorruptionLocked("before a read");
            return -1;
        }
        while (total < limit && dst.hasRemaining()) {
            int from = ring.readOffset();
            int n = (int) Math.min(Math.min(limit - total, dst.remaining()), ringBytes - from);
            dst.put(dst.position(), ringMem, RING_BASE + from, n);
            dst.position(dst.position() + n);
            ring.onConsumed(n);
            total += n;
        }
        unreadBytes -= total;
        return total;
    }

    /**
     * Moves bytes of the remote part at the head into {@code dst}, waiting for the RDMA READ it posts
     * (the read is the copy: it completes without the peer's threads). The wait holds nothing the
     * progress thread needs: it polls our own queue, then parks on {@link #changed}.
     *
     * @return bytes read, or -1 when the connection failed meanwhile
     */
    private int readRemoteLocked(ByteBuffer dst) {
        int r = large.readRemote(dst);
        if (r != LargeTransfers.IN_PROGRESS) {
            return r < 0 ? -1 : r;
        }
        long now = System.nanoTime();
        long spinUntil = now + (governor.mayStart(now) ? spin.maxNs() : 0);
        boolean interrupted = false;
        try {
            for (;;) {
                progressLocked();
                if (state == State.FAILED || released) {
                    return -1;
                }
                r = large.readRemote(dst);
                if (r != LargeTransfers.IN_PROGRESS) {
                    return r < 0 ? -1 : r;
                }
                if (System.nanoTime() - spinUntil < 0) {
                    Thread.onSpinWait();
                    continue;
                }
                waiters++; // before arming: the progress thread must not leave the event to us (onCompletionEvent)
                try {
                    if (armLocked()) {
                        // the READ's own timeout (zcopy) fails the connection, which signals us
                        changed.awaitNanos(TimeUnit.MILLISECONDS.toNanos(10));
                    }
                } catch (InterruptedException e) {
                    interrupted = true; // the READ writes into dst: finish it first
                } finally {
                    waiters--;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Copies as much of {@code src} as the send buffer takes and sends what flow control allows,
     * without blocking.
     *
     * @param src the bytes (its position advances)
     * @return bytes taken (0 when the send buffer is full or the connection is not established yet),
     *     {@link #FAILED}, {@link #CLOSED} or {@link #OUTPUT_SHUT}
     */
    public int write(ByteBuffer src) {
        return write(src, 0);
    }

    /**
     * Writes as {@link #write(ByteBuffer)} does; with {@link #HOLDS_BUFFER} a direct buffer with at
     * least {@link SdpOptions#zcopyThreshold()} bytes remaining may go by zero copy: the call then
     * returns 0 until the peer has read the buffer (or the transfer fell back to buffer copy), and the
     * caller must call again with the same, untouched buffer. Every write waits (returns 0) while a
     * zero-copy transfer holds the output, so the stream stays in order.
     *
     * @param src the bytes (its position advances)
     * @param flags 0 or {@link #HOLDS_BUFFER}
     * @return bytes taken, {@link #FAILED}, {@link #CLOSED} or {@link #OUTPUT_SHUT}
     */
    public int write(ByteBuffer src, int flags) {
        lock.lock();
        try {
            return writeLocked(src, flags);
        } catch (InternalError e) {
            memoryFaultLocked(e);
            return FAILED;
        } finally {
            unlockAndNotify();
        }
    }

    private int writeLocked(ByteBuffer src, int flags) {
        if (appClosed) {
            return CLOSED;
        }
        if (state == State.FAILED || peerGone) {
            return FAILED;
        }
        if (outputShut) {
            return OUTPUT_SHUT;
        }
        if (state != State.ESTABLISHED) {
            return 0;
        }
        progressLocked();
        if (state == State.FAILED) {
            return FAILED;
        }
        int total = ring != null ? copyIntoSendRingLocked(src) : 0;
        if (large != null && (large.hasUnsettled() || (flags & HOLDS_BUFFER) != 0 && src.isDirect()
            && (options.zcopyThreshold() > 0 && src.remaining() >= options.zcopyThreshold() || large.peerBufferAdvertised()))) {
            if (openBytes > 0) {
                closeOpenSlotLocked(); // what was written before goes first
            }
            int r = large.write(src);
            if (r < 0) {
                return FAILED;
            }
            total = r;
            transmitLocked();
            if (large.holdsOutput()) {
                armLocked();
                return state == State.FAILED && total == 0 ? FAILED : total;
            }
        }
        // Without coalescing a write waits while an earlier message waits for credits (seed 001 §4.1.4:
        // send returns once its data is on the network), then takes as many slots as are free.
        boolean earlierWaits = earlierMessageWaitsLocked();
        while (ring == null && src.hasRemaining() && !earlierWaits) {
            if (openBytes == 0 && slotOpen - slotCompleted == sendCount) {
                break; // every slot is in use
            }
            int slot = (int) (slotOpen % sendCount);
            int n = Math.min(src.remaining(), goal - openBytes);
            mem.put(sendBase + slot * bufferBytes + Bsdh.LENGTH + openBytes, src, src.position(), n);
            src.position(src.position() + n);
            openBytes += n;
            total += n;
            if (openBytes == goal || messagePerWrite && !src.hasRemaining()) {
                closeOpenSlotLocked(); // without coalescing no later write joins this message
            }
        }
        transmitLocked();
        if (total == 0 && state == State.ESTABLISHED && !fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            stallBeginsLocked(); // a credit stall: not a full send queue the device is still draining
        }
        if (hasPendingOutputLocked()) {
            armLocked();
        }
        return state == State.FAILED && total == 0 ? FAILED : total;
    }

    /** A write took nothing for want of credits: a stall begins, unless one is under way (one per wait, not per retry). */
    private void stallBeginsLocked() {
        if (stalled) {
            return;
        }
        stalled = true;
        creditStalls++;
        stallStartNs = System.nanoTime();
        stallEvent = ConnectionEvents.stallBegins(this, remote, fc.credits());
    }

    private void stallEndsLocked(boolean byClose) {
        stalled = false;
        creditStallNs += System.nanoTime() - stallStartNs;
        ConnectionEvents.stallEnds(stallEvent, byClose);
        stallEvent = null;
    }

    /** Packetized: copies into the send slots taken as one byte ring; runs go out in transmit. */
    private int copyIntoSendRingLocked(ByteBuffer src) {
        int total = 0;
        while (src.hasRemaining() && streamWritten - streamFreed < sendRingBytes) {
            int at = (int) (streamWritten % sendRingBytes);
            int room = (int) Math.min(sendRingBytes - (streamWritten - streamFreed), sendRingBytes - at);
            int n = Math.min(src.remaining(), room);
            mem.put(sendBase + at, src, src.position(), n);
            src.position(src.position() + n);
            streamWritten += n;
            total += n;
        }
        return total;
    }

    /**
     * A gathering write ({@code GatheringByteChannel.write}): with {@link #HOLDS_BUFFER} a run of direct
     * buffers at or above the zero-copy threshold is advertised at once, several in flight (up to the
     * peer's {@code max_adverts}), and the call returns 0 until the peer is done with them; otherwise
     * the buffers are copied in order as {@link #write(ByteBuffer)} does.
     *
     * @param srcs the buffers
     * @param offset the first
     * @param length how many
     * @param flags 0 or {@link #HOLDS_BUFFER}
     * @return bytes taken, or {@link #FAILED}, {@link #CLOSED}, {@link #OUTPUT_SHUT}
     */
    public long write(ByteBuffer[] srcs, int offset, int length, int flags) {
        long total = 0;
        if ((flags & HOLDS_BUFFER) != 0) {
            lock.lock();
            try {
                if (appClosed) {
                    return CLOSED;
                }
                if (state == State.FAILED || peerGone) {
                    return FAILED;
                }
                if (outputShut) {
                    return OUTPUT_SHUT;
                }
                if (state != State.ESTABLISHED) {
                    return 0;
                }
                progressLocked();
                if (large != null && (options.zcopyThreshold() > 0 || large.hasUnsettled())) {
                    if (openBytes > 0) {
                        closeOpenSlotLocked(); // what was written before goes first
                    }
                    long r = large.write(srcs, offset, length);
                    if (r < 0) {
                        return FAILED;
                    }
                    total = r;
                    transmitLocked();
                    if (large.holdsOutput()) {
                        armLocked();
                        return state == State.FAILED && total == 0 ? FAILED : total;
                    }
                }
            } finally {
                unlockAndNotify();
            }
        }
        for (int i = offset; i < offset + length; i++) {
            if (!srcs[i].hasRemaining()) {
                continue;
            }
            int n = write(srcs[i], flags);
            if (n < 0) {
                return total == 0 ? n : total;
            }
            total += n;
            if (srcs[i].hasRemaining()) {
                break;
            }
        }
        return total;
    }

    /**
     * Advances the buffers of an unfinished {@link #write(ByteBuffer[], int, int, int)} with
     * {@link #HOLDS_BUFFER} over what the peer is already done with, starting nothing new: a channel
     * closing with buffers handed over calls it before {@link #close()}, so that only what the peer
     * has not taken is reported as not written.
     *
     * @param srcs the buffers, as given to the write
     * @param offset the first
     * @param length how many
     * @return bytes finished
     */
    public long settle(ByteBuffer[] srcs, int offset, int length) {
        lock.lock();
        try {
            if (appClosed || released || large == null) {
                return 0;
            }
            progressLocked();
            return released ? 0 : large.settle(srcs, offset, length);
        } finally {
            unlockAndNotify();
        }
    }

    /** Without coalescing ({@link #messagePerWrite}): a closed slot still waits for credits, so no write may take bytes. */
    private boolean earlierMessageWaitsLocked() {
        return messagePerWrite && slotPosted < slotOpen;
    }

    private void closeOpenSlotLocked() {
        slotLen[(int) (slotOpen % sendCount)] = openBytes;
        slotOpen++;
        openBytes = 0;
    }

    /**
     * Ends this side's output (TCP {@code shutdownOutput}): written data is still delivered, then a
     * DisConn tells the peer, whose reads then return EOF. Idempotent.
     */
    public void shutdownOutput() {
        lock.lock();
        try {
            if (outputShut || state == State.FAILED) {
                return;
            }
            outputShut = true;
            traceRare("conn.shutdownOutput");
            signalAllLocked();
            if (state == State.ESTABLISHED) {
                transmitLocked();
                armLocked();
            }
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * Ends this side's input (TCP {@code shutdownInput}): reads return EOF; data the peer still sends
     * is taken and dropped, so its writes never block on this side. Idempotent.
     */
    public void shutdownInput() {
        lock.lock();
        try {
            if (inputShut) {
                return;
            }
            inputShut = true;
            signalAllLocked();
            discardUnreadLocked();
            if (state == State.ESTABLISHED) {
                transmitLocked();
                armLocked(); // the progress thread takes and drops what still arrives
            }
        } finally {
            unlockAndNotify();
        }
    }

    private void discardUnreadLocked() {
        if (ring != null) {
            ring.onConsumed(ring.unread());
            ringQueued = 0;
        }
        remoteAtHead = false;
        headAdvertChecked = false;
        if (large != null && !released) {
            large.discardIncoming();
        }
        while (unreadHead != unreadTail) {
            int buf = unread[(int) (unreadHead % recvCount)];
            unreadHead++;
            if (!released && state != State.FAILED) {
                postReceiveLocked(buf);
            }
        }
        headOffset = 0;
        unreadBytes = 0;
    }

    /**
     * Closes the connection as TCP's {@code close} does: gracefully (written data is delivered, then
     * DisConn; resources are freed once the peer's DisConn arrives, or after
     * {@link SdpOptions#closeTimeoutMs()} with an abort) — or abortively, as a reset the peer sees, when
     * {@code SO_LINGER} is 0, when unread data is left, or before the connection was established.
     * Returns at once; {@link #awaitReleased} waits for the end. Idempotent.
     */
    public void close() {
        lock.lock();
        try {
            if (appClosed) {
                return;
            }
            if (state == State.ESTABLISHED) {
                // what arrived counts, taken or not (TCP's kernel knows of it): unread data makes the close a reset
                progressLocked();
            }
            appClosed = true;
            traceRare("conn.close");
            signalAllLocked();
            switch (state) {
                case CONNECTING, HANDSHAKE -> failLocked(Failure.ABORTED, "closed while connecting", true, false);
                case ESTABLISHED -> {
                    if (options.lingerSeconds() == 0 || hasUnreadLocked()) {
                        failLocked(Failure.ABORTED, options.lingerSeconds() == 0 ? "SO_LINGER 0" : "closed with "
                            + unreadBytes + " unread bytes", true, false);
                    } else if (large != null && large.holdsOutput()) {
                        // the peer may still read the blocked writer's buffer: reset before the writer returns
                        failLocked(Failure.ABORTED, "closed during a zero-copy write", true, false);
                    } else if (large != null && large.sinkBufferOut()) {
                        // the peer may still write the blocked reader's buffer (SinkAvail): likewise
                        failLocked(Failure.ABORTED, "closed while a read buffer is advertised to the peer", true, false);
                    } else {
                        outputShut = true;
                        closeTimer = stack.schedule(this::onCloseTimeout, TimeUnit.MILLISECONDS.toNanos(options.closeTimeoutMs()));
                        transmitLocked();
                        maybeFinishLocked();
                        armLocked();
                    }
                }
                default -> {
                    discardUnreadLocked();
                    maybeReleaseLocked();
                }
            }
        } catch (InternalError e) {
            memoryFaultLocked(e);
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * Sets {@code TCP_NODELAY} at run time; turning it on sends a held partial message at once.
     *
     * @param on true to send small writes at once
     */
    public void noDelay(boolean on) {
        lock.lock();
        try {
            noDelay = on;
            progressLocked();
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * Sets the spin window at run time ({@link SdpOptions#spinNs()}): the next blocked operation
     * polls this long at most before it parks.
     *
     * @param ns 0 (park at once) or more
     */
    public void spinNs(long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("spinNs must be >= 0: " + ns);
        }
        lock.lock();
        try {
            options.spinNs(ns);
            spin.configure(ns);
        } finally {
            unlock();
        }
    }

    /**
     * The configured spin window.
     *
     * @return nanoseconds
     */
    public long spinNs() {
        return spin.maxNs();
    }

    /**
     * Sets the zero-copy threshold at run time (it takes effect with the next write).
     *
     * @param bytes 0 (off) or at least {@link SdpOptions#ZCOPY_THRESHOLD_MIN}
     */
    public void zcopyThreshold(int bytes) {
        lock.lock();
        try {
            options.zcopyThreshold(bytes);
        } finally {
            unlock();
        }
    }

    /**
     * Sets {@code SO_LINGER} at run time; it decides how a later {@link #close()} ends the connection.
     *
     * @param seconds 0 for an abortive close, negative (off) or positive for a graceful one
     */
    public void lingerSeconds(int seconds) {
        lock.lock();
        try {
            options.lingerSeconds(seconds < 0 ? -1 : seconds);
        } finally {
            unlock();
        }
    }

    /**
     * Whether small writes go out at once.
     *
     * @return the current {@code TCP_NODELAY}
     */
    public boolean noDelay() {
        lock.lock();
        try {
            return noDelay;
        } finally {
            unlock();
        }
    }

    /** Aborts the connection: the peer sees a reset, unread and unsent data are dropped. */
    public void abort() {
        lock.lock();
        try {
            appClosed = true;
            failLocked(Failure.ABORTED, "aborted by the application", true, false);
        } finally {
            unlockAndNotify();
        }
    }

    private void onCloseTimeout() {
        lock.lock();
        try {
            if (state == State.ESTABLISHED) {
                failLocked(Failure.CLOSE_TIMEOUT, "the peer's DisConn did not come within " + options.closeTimeoutMs()
                    + " ms of close", true, true);
            }
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * The ready operations now, after taking what completions are there.
     *
     * @return a combination of {@link #OP_READ}, {@link #OP_WRITE}, {@link #OP_CONNECT}, {@link #OP_ENDED}
     */
    public int readyOps() {
        lock.lock();
        try {
            progressLocked();
            return readyOpsLocked();
        } finally {
            unlockAndNotify();
        }
    }

    private int readyOpsLocked() {
        int ops = 0;
        boolean failed = state == State.FAILED;
        // a closed or shut half is "ready": the call returns its status at once
        if (failed || appClosed || hasUnreadLocked() || disconnReceived || inputShut || state == State.FINISHED) {
            ops |= OP_READ;
        }
        if (failed || peerGone || appClosed || outputShut || (state == State.ESTABLISHED && (ring != null
            ? streamWritten - streamFreed < sendRingBytes
            : (large == null || !large.holdsOutput()) && !earlierMessageWaitsLocked()
                && (openBytes > 0 && openBytes < goal || slotOpen - slotCompleted < sendCount)))) {
            ops |= OP_WRITE;
        }
        if (state != State.CONNECTING && state != State.HANDSHAKE) {
            ops |= OP_CONNECT;
        }
        if (failed || (state == State.FINISHED && !hasUnreadLocked())) {
            ops |= OP_ENDED;
        }
        return ops;
    }

    /**
     * Waits until one of {@code ops} is ready: spins polling the queue while spinning pays (at most
     * {@link SdpOptions#spinNs()}: this connection's {@link SpinWindow}, and only while the
     * {@link SpinGovernor} finds a core free), then arms it and parks until the progress thread
     * signals a change.
     *
     * @param ops the operations of interest
     * @param timeoutNs the longest wait; 0 only checks
     * @return the ready operations among {@code ops}, 0 when the time ran out
     * @throws InterruptedException when the thread is interrupted while parked
     */
    public int await(int ops, long timeoutNs) throws InterruptedException {
        return await(ops, timeoutNs, null);
    }

    /**
     * {@link #await(int, long)} for a caller inside an interruptible channel's blocking section: a wait
     * in a JDK selector (the direct wait on the queue pair's wake channel) replaces the thread's
     * interrupt hook with the selector's own and removes it on the way out, so the caller's channel
     * would no longer be closed by an interrupt; {@code afterKernelWait} runs after each such wait,
     * with no lock held, to put the channel's hook back (its {@code begin()}, which also acts on an
     * interrupt that came meanwhile).
     *
     * @param ops the operations of interest
     * @param timeoutNs the longest wait; 0 only checks
     * @param afterKernelWait run after each wait in a selector, or null
     * @return the ready operations among {@code ops}, 0 when the time ran out
     * @throws InterruptedException when the thread is interrupted while it waits
     */
    public int await(int ops, long timeoutNs, Runnable afterKernelWait) throws InterruptedException {
        long start = System.nanoTime();
        int r = readyOps() & ops;
        if (r != 0 || timeoutNs <= 0) {
            return r;
        }
        boolean maySpin = spin.maxNs() > 0 && governor.mayStart(start);
        long window = maySpin ? Math.min(spin.next(), timeoutNs) : 0;
        if (window > 0) {
            r = spinWait(ops, start, window);
            if (r != 0) {
                return r;
            }
        }
        // then, while zero-copy transfers are expected to end soon, poll yielding the CPU: with its own
        // adaptive back-off (LargeTransfers), and a yield leaves the core to whoever is runnable, so
        // the spin governor does not gate it
        long hint = spin.maxNs() > 0 ? Math.min(transfersSpinHintNs(ops, start), timeoutNs) : 0;
        if (hint > 0) {
            long yieldUntil = System.nanoTime() + hint;
            do {
                r = readyOps() & ops;
                if (r != 0) {
                    return r;
                }
                Thread.yield(); // whoever must run for the transfer to end (on few CPUs: the peer's wake-up)
            } while (System.nanoTime() - yieldUntil < 0);
        }
        lock.lock();
        try {
            waiters++;
            try {
                for (;;) {
                    progressLocked();
                    r = readyOpsLocked() & ops;
                    if (r != 0) {
                        return r;
                    }
                    long left = timeoutNs - (System.nanoTime() - start);
                    if (left <= 0) {
                        return 0;
                    }
                    // a direct waiter holds the wake channel before it arms the queue: the device then
                    // leaves the queue to it
                    io.jsdp.verbs.WakeChannel wc = directClaimLocked();
                    if (!armLocked()) {
                        if (wc != null) {
                            wc.release(Thread.currentThread());
                        }
                        continue; // completions arrived while arming: look again
                    }
                    if (wc != null) {
                        directWaitLocked(wc, left, ops != OP_READ || hasPendingOutputLocked() || large != null
                            && large.holdsOutput(), afterKernelWait);
                    } else {
                        changed.awaitNanos(left);
                    }
                }
            } catch (InternalError e) {
                memoryFaultLocked(e);
                return readyOpsLocked() & ops;
            } finally {
                waiters--;
            }
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * The queue pair's wake channel, for a selector that waits for this connection itself
     * ({@link io.jsdp.verbs.WakeChannel}), or null: not established, or the device has none.
     *
     * @return the wake channel, or null
     */
    public io.jsdp.verbs.WakeChannel wakeChannel() {
        lock.lock();
        try {
            return qp != null && !released && state == State.ESTABLISHED ? qp.wakeChannel() : null;
        } finally {
            unlock();
        }
    }

    /**
     * Whether output of this connection waits for room, so that the completion of a send must wake a
     * selector waiting on its wake channel.
     *
     * @return true when sends matter
     */
    public boolean wakeOnSends() {
        lock.lock();
        try {
            return hasPendingOutputLocked() || large != null && large.holdsOutput();
        } finally {
            unlock();
        }
    }

    /** Wakes every thread waiting on this connection: the condition's, and one in its direct wait. */
    private void signalAllLocked() {
        changed.signalAll();
        java.nio.channels.Selector s = directWaiter;
        if (s != null) {
            s.wakeup();
        }
    }

    /**
     * Takes the queue pair's wake channel for the calling thread, before {@link #await} arms the queue
     * and parks: when it has one and the caller is a platform thread holding the lock once. Held, it
     * tells the peer and the device that this thread looks before it sleeps.
     *
     * @return the channel held, or null: wait on the condition
     */
    private io.jsdp.verbs.WakeChannel directClaimLocked() {
        io.jsdp.verbs.WakeChannel wc = qp != null && !released ? qp.wakeChannel() : null;
        if (wc == null || lock.getHoldCount() != 1 || !DirectWait.mayWait()) {
            return null;
        }
        java.nio.channels.Selector sel = DirectWait.selectorFor(wc.channel());
        if (sel == null || !wc.claim(Thread.currentThread())) {
            return null;
        }
        directSelector = sel;
        return wc;
    }

    /**
     * The wait of {@link #await} on the held wake channel: arms it, looks once more (what the peer
     * published before the arm is found now), and waits in the thread's selector with the lock
     * released, until the peer rings, a local signal wakes the selector, the time passes or an
     * interrupt; then gives the channel up. The woken thread polls the queue itself (the caller's
     * loop): no other thread is on the path.
     *
     * @param sendsToo whether the completion of a send must end the wait (a writer's wait, or output of
     *     ours still waiting to go out); a reader with nothing to send is woken only by messages
     * @param afterWait the caller's, run after the selection with no lock held, or null
     *
     * @throws InterruptedException when interrupted (the status cleared, as the condition's wait does)
     */
    private void directWaitLocked(io.jsdp.verbs.WakeChannel wc, long leftNs, boolean sendsToo, Runnable afterWait)
        throws InterruptedException {
        Thread me = Thread.currentThread();
        java.nio.channels.Selector sel = directSelector;
        // held: from here the peer rings nobody else, so this thread arms and looks before it sleeps
        wc.arm(sendsToo);
        if (progressLocked() != 0 || eventPending || released) {
            wc.disarm();
            wc.drain();
            wc.release(me);
            return; // it came before the arm
        }
        directWaiter = sel;
        directWaits++;
        lock.unlock();
        try {
            DirectWait.select(sel, leftNs);
        } catch (java.io.IOException e) {
            TRACE.record(TraceLevel.RARE, "engine.directWaitFailed", e);
        } finally {
            if (afterWait != null) {
                afterWait.run(); // the caller's interrupt hook back, before anything else can block
            }
            lock.lock();
            directWaiter = null;
            wc.disarm();
            wc.drain(); // while still held: a ring meant for the next holder is never taken here (false
                        // when dead: the next claim fails and waits on the condition)
            wc.release(me); // another thread may wait next (a pool's)
        }
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    /**
     * The spin phase of {@link #await}: polls for {@code windowNs}, and stops early when the thread
     * finds it was descheduled (a core is wanted elsewhere: {@link SpinGovernor#onPreempted}) or is
     * interrupted (the wait that follows throws at once, as a parked thread would be woken).
     *
     * @return the ready operations, or 0 when the window passed without them
     */
    private int spinWait(int ops, long start, long windowNs) {
        governor.enter();
        try {
            long last = start;
            long until = start + windowNs;
            for (;;) {
                int r = readyOps() & ops;
                if (r != 0) {
                    spin.hit();
                    return r;
                }
                long now = System.nanoTime();
                if (now - last >= SpinGovernor.PREEMPTION_GAP_NS) {
                    governor.onPreempted(now - last, now);
                    return 0; // not the connection's miss: the machine's
                }
                if (now - until >= 0) {
                    spin.miss();
                    return 0;
                }
                if (Thread.currentThread().isInterrupted()) {
                    return 0; // neither a hit nor a miss
                }
                last = now;
                Thread.onSpinWait();
            }
        } finally {
            governor.exit();
        }
    }

    /** Polling beyond the spin window while zero-copy transfers are expected to end ({@link LargeTransfers#spinHintNs}). */
    private long transfersSpinHintNs(int ops, long nowNs) {
        lock.lock();
        try {
            if (large == null || released || state != State.ESTABLISHED) {
                return 0;
            }
            long hint = 0;
            if ((ops & OP_WRITE) != 0 && large.holdsOutput()) {
                hint = large.spinHintNs(true, nowNs);
            }
            if ((ops & OP_READ) != 0 && !hasUnreadLocked() && !disconnReceived) {
                hint = Math.max(hint, large.spinHintNs(false, nowNs));
            }
            return Math.max(0, hint);
        } finally {
            unlock();
        }
    }

    /**
     * Waits for the connect to finish.
     *
     * @param timeoutNs the longest wait
     * @return true when established, false when it failed (see {@link #failure()}) or time ran out
     * @throws InterruptedException when interrupted
     */
    public boolean awaitConnected(long timeoutNs) throws InterruptedException {
        return awaitConnected(timeoutNs, null);
    }

    /**
     * {@link #awaitConnected(long)} for a caller inside an interruptible channel's blocking section:
     * {@code afterKernelWait} puts the channel's interrupt hook back after each wait in a selector
     * ({@link #await(int, long, Runnable)}).
     *
     * @param timeoutNs the longest wait
     * @param afterKernelWait run after each wait in a selector, or null
     * @return true when established, false when it failed (see {@link #failure()}) or time ran out
     * @throws InterruptedException when interrupted
     */
    public boolean awaitConnected(long timeoutNs, Runnable afterKernelWait) throws InterruptedException {
        await(OP_CONNECT, timeoutNs, afterKernelWait);
        lock.lock();
        try {
            return state == State.ESTABLISHED || state == State.FINISHED;
        } finally {
            unlock();
        }
    }

    /**
     * Waits until the connection has ended (graceful or failed) and released its resources.
     *
     * @param timeoutNs the longest wait
     * @return true when released
     * @throws InterruptedException when interrupted
     */
    public boolean awaitReleased(long timeoutNs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNs;
        lock.lock();
        try {
            waiters++;
            try {
                while (!released) {
                    progressLocked();
                    maybeReleaseLocked();
                    if (released) {
                        break;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    if (armLocked()) {
                        changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
                    }
                }
                return true;
            } finally {
                waiters--;
            }
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * Waits until this side's output is done — after {@link #close()} or {@link #shutdownOutput()}, its
     * DisConn sent and acknowledged, so every byte written reached the peer — or the connection ended
     * ({@code SO_LINGER} with a positive time).
     *
     * @param timeoutNs the longest wait
     * @return true when done, false when the time ran out
     * @throws InterruptedException when interrupted
     */
    public boolean awaitOutputDone(long timeoutNs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNs;
        lock.lock();
        try {
            waiters++;
            try {
                for (;;) {
                    progressLocked();
                    if (disconnSendDone || state == State.FAILED || state == State.FINISHED || released) {
                        return true;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    if (armLocked()) {
                        changed.awaitNanos(left);
                    }
                }
            } finally {
                waiters--;
            }
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * Sets the listener told when readiness may have changed; while one is set the completion queue
     * stays armed so the progress thread sees every arrival.
     *
     * @param l the listener, or null
     */
    public void readinessListener(ReadinessListener l) {
        this.listener = l;
        lock.lock();
        try {
            lastNotifiedOps = -1;
            if (l != null) {
                armLocked();
            }
        } finally {
            unlockAndNotify();
        }
    }

    // ------------------------------------------------------------------ progress

    /**
     * {@link #onCompletionEvent} for a device thread, which must not wait for this connection's lock
     * ({@link SdpStack}), or for the lock's holder itself, whose poll fired the event: it handles the
     * event when the lock is free, leaves it to the lock's holder when that is the calling thread or
     * nobody waits, and otherwise returns false so the stack's progress thread takes it (a thread
     * parking inside {@code awaitNanos} gives the lock up without looking at the pending event).
     *
     * @return false when the progress thread must handle the event
     */
    boolean onCompletionEventWithoutWaiting() {
        eventPending = true;
        if (lock.isHeldByCurrentThread()) {
            return true; // our own poll fired it (armLocked's look after the arm): we take it before we arm or unlock
        }
        if (!lock.tryLock() && !tryLockBriefly()) {
            return waiters == 0;
        }
        handleEventAndUnlock();
        return true;
    }

    /** How long a device thread polls a busy lock before it leaves the event to the progress thread. */
    private static final long DEVICE_LOCK_SPIN_NS = 5_000;

    /**
     * Polls the lock for {@link #DEVICE_LOCK_SPIN_NS} while a thread waits: its holder is mostly that
     * waiter between its last look and its park, which gives the lock up within a microsecond or two.
     */
    private boolean tryLockBriefly() {
        if (waiters == 0) {
            return false; // the holder takes the pending event when it unlocks
        }
        long end = System.nanoTime() + DEVICE_LOCK_SPIN_NS;
        do {
            Thread.onSpinWait();
            if (lock.tryLock()) {
                return true;
            }
        } while (System.nanoTime() - end < 0);
        return false;
    }

    /**
     * The stack's progress thread: our armed queue fired. When the lock is busy the event is left to
     * its holder ({@link #eventPending}) — unless a thread parks or is about to, which the holder's
     * unlock inside {@code awaitNanos} would not tell: then wait for the lock. (A waiter increments
     * {@link #waiters} before it checks {@link #eventPending} in {@link #armLocked}; we set the flag
     * before reading {@code waiters}: one of the two sees the other.)
     */
    void onCompletionEvent() {
        eventPending = true;
        if (!lock.tryLock()) {
            if (waiters == 0) {
                return;
            }
            lock.lock();
        }
        handleEventAndUnlock();
    }

    /** Holding the lock: handles the event, unlocks, then whatever event came meanwhile. */
    private void handleEventAndUnlock() {
        try {
            handleEventLocked(true);
        } finally {
            unlockAndNotifyOnly();
        }
        if (eventPending) {
            handlePendingEvent(true);
        }
    }

    /**
     * Handles a completion event.
     *
     * @param fromStack whether the stack's progress thread runs it (not an application's call: a
     *     scheme whose data must not move without the application gets none posted, see
     *     {@link #dataMayMoveLocked})
     */
    private void handleEventLocked(boolean fromStack) {
        if (!eventPending) {
            return; // handled by the holder meanwhile
        }
        eventPending = false;
        stackContext = fromStack;
        try {
            cqArmed = false; // the event used the arm up
            cqArmedSolicited = false;
            progressLocked();
            if (needsArmLocked()) {
                armLocked();
            } else {
                solicitedArmWhenIdleLocked();
            }
            signalAllLocked();
        } finally {
            stackContext = false;
        }
    }

    /** After an unlock: handles an event left pending while the lock was held, if the lock is free. */
    private void handlePendingEvent(boolean fromStack) {
        while (eventPending && lock.tryLock()) {
            try {
                handleEventLocked(fromStack);
            } finally {
                unlockAndNotifyOnly();
            }
        }
    }

    /** {@code lock.unlock()}, then any completion event left pending meanwhile (the caller's own call). */
    private void unlock() {
        solicitedArmWhenIdleLocked(); // a reader that never waited had no event to start the idle check
        lock.unlock();
        if (eventPending) {
            handlePendingEvent(false);
        }
    }

    private boolean needsArmLocked() {
        if (released) {
            return false;
        }
        return waiters > 0 || listener != null || state == State.CONNECTING || state == State.HANDSHAKE
            || hasPendingOutputLocked() || (appClosed || inputShut) && state == State.ESTABLISHED;
    }

    /**
     * Whether something must go out without the application's help: data waiting for credits or for
     * the in-flight message (Nagle), a DisConn or its completion, a credit update. Messages merely in
     * flight need no arming: their slots are reclaimed at the next call.
     */
    private boolean hasPendingOutputLocked() {
        return slotPosted < slotOpen || openBytes > 0 || streamAnnounced < streamWritten || (outputShut && !disconnSendDone)
            || fc.creditUpdateNeeded(posted, lastRecvMseq, recvCount) || ring != null && ring.ringAckNeeded()
            || large != null && large.hasPendingOutput();
    }

    /** Every byte written is posted (or handed to the device): nothing of ours waits in the send buffer. */
    private boolean allDataPostedLocked() {
        return slotPosted == slotOpen && openBytes == 0 && streamAnnounced == streamWritten
            && (large == null || !large.holdsOutput());
    }

    /**
     * Whether held data may be posted now: always from the application's own calls; from a stack
     * thread only when the scheme moves data without the application, or the application waits on
     * this connection (a blocked call is a communication call) or closed or shut its output.
     */
    private boolean dataMayMoveLocked() {
        return !stackContext || fc.movesDataWithoutApplication() || waiters > 0 || outputShut || appClosed;
    }

    /**
     * Arms the queue and looks once more, so a completion that came before the arm is not missed.
     *
     * @return true when armed with nothing new; false when completions were taken or the look fired
     *     the event (look again)
     */
    private boolean armLocked() {
        if (released) {
            return true;
        }
        if (eventPending) {
            // the progress thread left us an event: the arm is used up, and waiters may have news
            eventPending = false;
            cqArmed = false;
            cqArmedSolicited = false;
            signalAllLocked();
        }
        // One arm gives one event (rsocket's cq_armed): re-arming an armed queue on every call of a
        // spinning writer cost a device call each time (in SoftRdma, a wakeup of its service thread).
        // A solicited-only arm is widened (verbs: a next-completion request widens a solicited one).
        if (!cqArmed || cqArmedSolicited) {
            cqArmed = cq.requestNotify(false) == Errno.OK;
            cqArmedSolicited = false;
        }
        // Our own look may fire the event (the device dispatches it to us, the lock's holder: eventPending):
        // then the arm is used up and parking would wait for an event that already came.
        return progressLocked() == 0 && !eventPending;
    }

    /**
     * Nothing needs the next completion, but the peer may send a message to be taken without the
     * application: zero copy's control messages (a SinkAvailCancel to answer, the RdmaRdCompl that ends a
     * non-blocking hand-over) and a message that left the peer out of credits (it waits for the credits
     * our application's reads freed). The peer sends those solicited; arm for solicited events only (and
     * errors, which every arm reports), so ordinary traffic wakes no progress thread.
     */
    private void armSolicitedLocked() {
        if (released || cqArmed || state != State.ESTABLISHED) {
            return;
        }
        cqArmed = cq.requestNotify(true) == Errno.OK;
        cqArmedSolicited = cqArmed;
        if (cqArmed && progressLocked() > 0 && needsArmLocked()) {
            armLocked(); // completions came while arming and left something to do
        }
    }

    /**
     * Arms for solicited events once the application has made no call for a while, not now: a solicited
     * message to a queue its application polls anyway would wake the stack for nothing (jsdp-bench
     * progress: about five such wakes per iteration with both applications computing on 2 CPUs). The
     * check runs {@link #IDLE_CHECK_MIN_NS} after the event and again, with a doubling delay up to
     * {@link #IDLE_CHECK_MAX_NS}, while the application keeps calling (or keeps parking with the queue
     * armed); only an arm for idleness starts the next series at the minimum again. So a reader that
     * stops reading is armed for a starving writer's message within that time (TCP's sender waits
     * longer on a zero window: its persist timer starts at a retransmission timeout), and a connection
     * that parks between messages does not wake the timer thread every millisecond (issue 27: each
     * such wake-up is one more thread wanting a core).
     */
    private void solicitedArmWhenIdleLocked() {
        if (released || cqArmed || state != State.ESTABLISHED || idleCheckPending) {
            return;
        }
        scheduleIdleCheckLocked(Math.max(idleCheckNs, IDLE_CHECK_MIN_NS));
    }

    /** Schedules the idle check in {@code delayNs}; it compares {@link #appPolls} with their count now. */
    private void scheduleIdleCheckLocked(long delayNs) {
        idleCheckNs = delayNs;
        idleCheckPolls = appPolls;
        idleCheckPending = stack.schedule(this::idleCheck, delayNs) != null; // null: the stack is closing
    }

    private void idleCheck() {
        lock.lock();
        stackContext = true; // the timer's thread: held packetized data does not move here
        try {
            idleCheckPending = false;
            if (released || state != State.ESTABLISHED) {
                return;
            }
            long next = Math.min(2 * idleCheckNs, IDLE_CHECK_MAX_NS);
            if (cqArmed) {
                idleCheckNs = next; // armed by a waiter meanwhile: busy, the next check may wait longer
                return;
            }
            if (appPolls == idleCheckPolls) {
                idleCheckNs = IDLE_CHECK_MIN_NS;
                armSolicitedLocked();
                return;
            }
            scheduleIdleCheckLocked(next);
        } finally {
            stackContext = false;
            unlock();
        }
    }

    /** Takes every completion there is, then sends what may go. */
    private int progressLocked() {
        if (released) {
            return 0;
        }
        try {
            int n = drainLocked();
            if (state == State.ESTABLISHED) {
                transmitLocked();
            }
            return n;
        } catch (InternalError e) {
            memoryFaultLocked(e);
            return 1; // the connection changed: it failed
        }
    }

    /**
     * A memory access of this connection faulted: a shared segment it uses (its buffers, a wire, the peer's
     * memory) was truncated under it, whose lost pages raise SIGBUS, which the JVM reports as
     * {@code InternalError} in the accessing thread, soon after the access. The connection fails
     * ({@link Failure#DEVICE_ERROR}, FFDC {@code connection.MEMORY_FAULT}); nothing more is posted on it,
     * since its memory may fault again, and the peer hears of it through the connection manager.
     */
    private void memoryFaultLocked(InternalError e) {
        TRACE.record(TraceLevel.ERROR, "conn.memoryFault", e);
        String detail = "memory fault, a shared segment of the connection truncated? (" + e.getMessage() + ")";
        try {
            failLocked(Failure.DEVICE_ERROR, detail, false, true, "connection.MEMORY_FAULT");
        } catch (InternalError again) {
            // the snapshot or the release touched the lost pages too: fail without them
            TRACE.record(TraceLevel.ERROR, "conn.memoryFault", again);
            failLocked(Failure.DEVICE_ERROR, detail, false, false);
        }
    }

    private int drainLocked() {
        if (!stackContext) {
            appPolls++;
        }
        int total = 0;
        for (;;) {
            if (released) {
                return total;
            }
            int n = cq.poll(wcs, wcs.length);
            if (n < 0) {
                failLocked(Failure.DEVICE_ERROR, "completion queue overflow (errno " + -n + ")", false, true);
                return total;
            }
            for (int i = 0; i < n; i++) {
                if (released) {
                    // an earlier completion of the batch ended the connection (its memory is gone): it counts,
                    // so that a look before a wait sees that something happened and does not sleep on a
                    // connection whose wake channel went with its queue pair
                    return total + i;
                }
                try {
                    handleCompletionLocked(wcs[i]);
                } catch (RuntimeException e) {
                    // never throw out of completion handling: the connection fails, others go on
                    internalErrorLocked(e);
                }
            }
            total += n;
            if (n < wcs.length) {
                return total;
            }
        }
    }

    private void handleCompletionLocked(WorkCompletion wc) {
        long kind = wc.wrId() & ~INDEX_MASK;
        int index = (int) (wc.wrId() & INDEX_MASK);
        activity++;
        if (kind == KIND_RECV) {
            posted--;
            handleReceiveLocked(wc, index);
            return;
        }
        if (kind == KIND_ZCOPY && large != null && state != State.FAILED) {
            boolean held = large.holdsOutput();
            boolean taken = large.onCompletion(wc.wrId() & INDEX_MASK, wc);
            countHeldReleaseLocked(held);
            if (taken) {
                return;
            }
        }
        if (kind == KIND_ZCOPY && !wc.isSuccess() && state == State.FINISHED && peerGone && remoteAtHead) {
            // a READ from a peer that went away meanwhile failed: the reader waiting for it gets the reset now
            failLocked(Failure.RESET_BY_PEER, "RDMA READ " + wc.status() + " after the peer went away (" + failureDetail + ")",
                false, true);
            return;
        }
        if (!wc.isSuccess()) {
            if (state != State.FAILED && state != State.FINISHED) {
                String why = "send completion " + wc.status() + " (" + kindName(kind) + ")";
                if (kind == KIND_RING_WRITE && wc.status() != WcStatus.WR_FLUSH_ERR) {
                    // the peer's ring advertisement does not work: its rkey, address or size is bad
                    violationLocked(Violation.BAD_RKEY, why + " writing into the peer's ring at 0x"
                        + Long.toHexString(peerRingAddress) + " rkey 0x" + Integer.toHexString(peerRingRkey) + " ("
                        + (ring == null ? 0 : ring.peerRingBytes()) + " bytes)");
                } else if (kind == KIND_KEEPALIVE) {
                    failLocked(Failure.KEEPALIVE_TIMEOUT, why, false, true);
                } else if (!peerGoneIfEverythingReadLocked(why)) {
                    failLocked(Failure.DEVICE_ERROR, why, false, true);
                }
            }
            return;
        }
        if (kind == KIND_DATA) {
            slotCompleted++;
        } else if (kind == KIND_DEVICE) {
            deviceOutstanding--; // the "interrupt" of seed 001 §4.3.2: transmit moves the coalesced rest
            streamFreed = deviceEnd[index]; // the peer took the message: its send bytes are free
        } else if (kind == KIND_NOTE) {
            noteCompleted++;
            streamFreed = noteEnd[index]; // its writes completed before it: their send bytes are free
        } else if (kind == KIND_CTRL) {
            ctrlCompleted++;
            if (index == MessageId.DISCONN) {
                disconnSendDone = true;
                maybeFinishLocked();
            }
        } else if (kind == KIND_KEEPALIVE) {
            keepAliveOutstanding = false;
        }
    }

    private static String kindName(long kind) {
        if (kind == KIND_DATA) {
            return "data";
        }
        if (kind == KIND_CTRL) {
            return "control";
        }
        if (kind == KIND_RING_WRITE) {
            return "ring write";
        }
        if (kind == KIND_NOTE) {
            return "RingData";
        }
        if (kind == KIND_DEVICE) {
            return "device data";
        }
        if (kind == KIND_ZCOPY) {
            return "zero-copy RDMA READ/WRITE";
        }
        return kind == KIND_KEEPALIVE ? "keepalive" : "receive";
    }

    private void handleReceiveLocked(WorkCompletion wc, int buf) {
        if (!wc.isSuccess()) {
            if (state != State.FAILED && state != State.FINISHED && !(wc.status() == WcStatus.WR_FLUSH_ERR && released)) {
                String why = "receive completion " + wc.status();
                if (wc.status() != WcStatus.WR_FLUSH_ERR || !peerGoneIfEverythingReadLocked(why)) {
                    failLocked(Failure.DEVICE_ERROR, why, false, true);
                }
            }
            return;
        }
        if (state == State.FAILED) {
            return;
        }
        messagesReceived++;
        if (!StructureMarkers.checkAround(mem, 0, buf, bufferBytes)) {
            corruptionLocked(buf, "on arrival of a message");
            return;
        }
        int len = wc.byteLen();
        int off = recvOffset(buf);
        if (len < Bsdh.LENGTH) {
            violationLocked(Violation.SHORT_MESSAGE, "received " + len + " bytes");
            return;
        }
        bsdh.at(off);
        int mid = bsdh.mid();
        if (bsdh.len() != len) {
            violationLocked(Violation.LENGTH_MISMATCH, MessageId.name(mid) + " says len " + bsdh.len()
                + ", the completion delivered " + len);
            return;
        }
        int mseq = bsdh.mseq();
        int ack = bsdh.mseqAck();
        int bufs = bsdh.bufs();
        if (state == State.CONNECTING || state == State.HANDSHAKE) {
            handleHandshakeMessageLocked(buf, off, mid, mseq, bufs, len);
            return;
        }
        if (mid == MessageId.HELLO || mid == MessageId.HELLO_ACK) {
            violationLocked(Violation.SECOND_HELLO, MessageId.name(mid) + " with mseq " + mseq + " after the handshake");
            return;
        }
        boolean ringMessage = ring != null && (mid == MessageId.RING_DATA || mid == MessageId.RING_ACK);
        if (!MessageId.isDefined(mid) && !ringMessage) {
            violationLocked(Violation.UNKNOWN_MID, "mid " + MessageId.name(mid) + " mseq " + mseq);
            return;
        }
        if (mseq != lastRecvMseq + 1) {
            violationLocked(Violation.MSEQ_OUT_OF_ORDER, MessageId.name(mid) + " mseq " + mseq + ", expected "
                + (lastRecvMseq + 1));
            return;
        }
        int payload = len - Bsdh.LENGTH;
        boolean creditUpdate = mid == MessageId.DATA && payload == 0;
        Violation v = fc.onReceive(mseq, ack, bufs, creditUpdate, nextMseq);
        if (v != null) {
            violationLocked(v, MessageId.name(mid) + " mseq " + mseq + " mseq_ack " + ack + " bufs " + bufs
                + " (next mseq of ours " + nextMseq + "; " + fc.describe() + ")");
            return;
        }
        lastRecvMseq = mseq;
        lastPeerBufs = bufs;
        lastPeerAck = ack;
        if (large != null && (mid == MessageId.DATA && payload > 0 || mid == MessageId.SRC_AVAIL)) {
            large.onStreamMessage(false); // counts for SinkAvail's non_disc; voids our advertised buffer
        }
        switch (mid) {
            case MessageId.RING_DATA -> onRingDataLocked(buf, off, len, mseq);
            case MessageId.RING_ACK -> {
                if (len != RingMessages.RING_ACK_LENGTH) {
                    violationLocked(Violation.LENGTH_MISMATCH, "RingAck of " + len + " bytes");
                    return;
                }
                Violation rv = ring.onRingAck(mem.getInt(off + RingMessages.RING_ACK_CONSUMED_OFFSET));
                if (rv != null) {
                    violationLocked(rv, "RingAck mseq " + mseq + " consumed " + Integer.toUnsignedString(mem.getInt(off
                        + RingMessages.RING_ACK_CONSUMED_OFFSET)) + " (" + ring.describe() + ")");
                    return;
                }
                postReceiveLocked(buf);
            }
            case MessageId.DATA -> {
                if (payload == 0) {
                    postReceiveLocked(buf);
                } else if (ring != null && fc.deviceMessages() == 0) {
                    violationLocked(Violation.UNSUPPORTED_MID, "Data with " + payload + " payload bytes on a packetized "
                        + "connection (data goes into the ring)");
                } else if (disconnReceived) {
                    violationLocked(Violation.DATA_AFTER_DISCONN, payload + " bytes of Data after DisConn");
                } else if (appClosed) {
                    // TCP answers data for a closed socket with a reset
                    postReceiveLocked(buf);
                    failLocked(Failure.ABORTED, payload + " bytes arrived after close", true, false);
                } else if (inputShut) {
                    bytesReceived += payload;
                    postReceiveLocked(buf);
                } else {
                    bytesReceived += payload;
                    queueUnreadLocked(buf, payload, 0, false);
                }
            }
            case MessageId.SRC_AVAIL -> onSrcAvailLocked(buf, off, mseq, ack, payload);
            case MessageId.SINK_AVAIL -> onSinkAvailLocked(buf, off, mseq, payload);
            case MessageId.RDMA_RD_COMPL, MessageId.SEND_SM, MessageId.SRC_AVAIL_CANCEL, MessageId.RDMA_WR_COMPL,
                MessageId.SINK_AVAIL_CANCEL, MessageId.SINK_CANCEL_ACK -> {
                boolean sinkMessage = mid == MessageId.RDMA_WR_COMPL || mid == MessageId.SINK_AVAIL_CANCEL
                    || mid == MessageId.SINK_CANCEL_ACK;
                if (large == null || sinkMessage && (negotiated & LargeTransfers.CAPABILITY_SINK_AVAIL) == 0) {
                    violationLocked(Violation.UNSUPPORTED_MID, MessageId.name(mid) + " mseq " + mseq
                        + (large == null ? " (zero copy not negotiated)" : " (SinkAvail not negotiated)"));
                    return;
                }
                int want = mid == MessageId.RDMA_RD_COMPL || mid == MessageId.RDMA_WR_COMPL ? RdmaComplHeader.LENGTH : 0;
                if (payload != want) {
                    violationLocked(Violation.PAYLOAD_ON_CONTROL, MessageId.name(mid) + " with " + payload
                        + " bytes after the BSDH (expected " + want + ")");
                    return;
                }
                long size = want == 0 ? 0 : complH.wrap(bsdh.buffer(), off).size();
                postReceiveLocked(buf);
                boolean held = large.holdsOutput();
                large.onControl(mid, size, ack);
                countHeldReleaseLocked(held);
            }
            case MessageId.DISCONN -> {
                if (payload > 0) {
                    violationLocked(Violation.PAYLOAD_ON_CONTROL, "DisConn with " + payload + " payload bytes");
                    return;
                }
                if (disconnReceived) {
                    violationLocked(Violation.DATA_AFTER_DISCONN, "second DisConn");
                    return;
                }
                disconnReceived = true;
                traceRare("conn.disconnReceived");
                if (large != null) {
                    large.onPeerOutputEnded();
                }
                postReceiveLocked(buf);
                maybeFinishLocked();
            }
            case MessageId.ABORT_CONN -> {
                if (payload > 0) {
                    violationLocked(Violation.PAYLOAD_ON_CONTROL, "AbortConn with " + payload + " payload bytes");
                    return;
                }
                postReceiveLocked(buf);
                if (disconnReceived && state == State.ESTABLISHED) {
                    peerGoneLocked("AbortConn from the peer after its DisConn"); // a RST after the FIN
                } else if (!resetAfterUnreadLocked("AbortConn from the peer")) {
                    failLocked(Failure.RESET_BY_PEER, "AbortConn from the peer", false, true);
                }
            }
            default -> violationLocked(Violation.UNSUPPORTED_MID, MessageId.name(mid) + " mseq " + mseq);
        }
    }

    /** Packetized: the peer wrote a run into our ring; the notification's buffer goes back at once. */
    private void onRingDataLocked(int buf, int off, int len, int mseq) {
        if (len < RingMessages.RING_DATA_LENGTH) {
            violationLocked(Violation.LENGTH_MISMATCH, "RingData of " + len + " bytes");
            return;
        }
        if (!StructureMarkers.checkAround(ringMem, 0, 0, ringBytes)) {
            ringCorruptionLocked("on arrival of RingData mseq " + mseq);
            return;
        }
        long at = mem.getInt(off + RingMessages.RING_DATA_OFFSET_OFFSET) & 0xFFFF_FFFFL;
        long n = mem.getInt(off + RingMessages.RING_DATA_LENGTH_OFFSET) & 0xFFFF_FFFFL;
        int inline = len - RingMessages.RING_DATA_LENGTH;
        if (inline != 0 && (inline != n || (negotiated & FlowControlScheme.CAPABILITY_RING_INLINE) == 0)) {
            violationLocked(Violation.LENGTH_MISMATCH, "RingData of " + len + " bytes carries " + inline
                + " bytes inline for a run of " + n + ((negotiated & FlowControlScheme.CAPABILITY_RING_INLINE) == 0
                    ? " (inline runs not negotiated)" : ""));
            return;
        }
        int consumedWire = mem.getInt(off + RingMessages.RING_DATA_CONSUMED_OFFSET);
        Violation v = ring.onRingAck(consumedWire);
        if (v != null) {
            violationLocked(v, "RingData mseq " + mseq + " consumed " + Integer.toUnsignedString(consumedWire) + " ("
                + ring.describe() + ")");
            return;
        }
        if (disconnReceived) {
            violationLocked(Violation.DATA_AFTER_DISCONN, n + " ring bytes after DisConn");
            return;
        }
        v = ring.onRingData(at, n);
        if (v != null) {
            violationLocked(v, "RingData mseq " + mseq + " offset " + at + " length " + n + " (" + ring.describe() + ")");
            return;
        }
        for (int done = 0; done < inline;) { // a run carried inline: into the ring where it was checked to fit
            int to = (int) ((at + done) % ringBytes);
            int piece = Math.min(inline - done, ringBytes - to);
            ringMem.put(RING_BASE + to, mem, off + RingMessages.RING_DATA_LENGTH + done, piece);
            done += piece;
        }
        postReceiveLocked(buf);
        bytesReceived += n;
        if (appClosed) {
            failLocked(Failure.ABORTED, n + " bytes arrived after close", true, false);
        } else if (inputShut) {
            ring.onConsumed(n);
        } else {
            unreadBytes += n;
        }
    }

    private void queueUnreadLocked(int buf, int payload, int skip, boolean remote) {
        int slot = (int) (unreadTail % recvCount);
        if (ring != null) {
            // NIC-assisted: the ring bytes announced since the previous queued message come before this one
            unreadRingBefore[slot] = ring.unread() - ringQueued;
            ringQueued += unreadRingBefore[slot];
        }
        unread[slot] = buf;
        unreadLen[slot] = payload;
        unreadSkip[slot] = skip;
        unreadRemote[slot] = remote;
        unreadTail++;
        unreadBytes += payload;
    }

    /** A SrcAvail: its inline bytes join the stream like Data, followed by its remote part (section 9). */
    private void onSrcAvailLocked(int buf, int off, int mseq, int ack, int payload) {
        if (large == null) {
            violationLocked(Violation.UNSUPPORTED_MID, "SrcAvail mseq " + mseq + " (zero copy not negotiated)");
            return;
        }
        if (payload < SrcAvailHeader.LENGTH) {
            violationLocked(Violation.BAD_SRC_AVAIL, "SrcAvail mseq " + mseq + " with " + payload
                + " bytes after the BSDH, shorter than its header");
            return;
        }
        if (disconnReceived) {
            violationLocked(Violation.DATA_AFTER_DISCONN, "SrcAvail after DisConn");
            return;
        }
        if (appClosed) {
            postReceiveLocked(buf);
            failLocked(Failure.ABORTED, "SrcAvail arrived after close", true, false);
            return;
        }
        srcAh.wrap(bsdh.buffer(), off);
        int inline = payload - SrcAvailHeader.LENGTH;
        boolean queued = large.onSrcAvail(mseq, srcAh.len(), inline, srcAh.rkey(), srcAh.vaddr(), inputShut, ack);
        if (state == State.FAILED) {
            return;
        }
        if (!queued) {
            postReceiveLocked(buf); // refused (input shut): the inline bytes are dropped too
            return;
        }
        bytesReceived += inline;
        queueUnreadLocked(buf, inline, SrcAvailHeader.LENGTH, true);
    }

    /** A SinkAvail: the peer's reader advertises its buffer for our next blocking write (section 9). */
    private void onSinkAvailLocked(int buf, int off, int mseq, int payload) {
        if (large == null || (negotiated & LargeTransfers.CAPABILITY_SINK_AVAIL) == 0) {
            violationLocked(Violation.UNSUPPORTED_MID, "SinkAvail mseq " + mseq + " (SinkAvail not negotiated)");
            return;
        }
        if (payload != SinkAvailHeader.LENGTH) {
            violationLocked(Violation.BAD_SINK_AVAIL, "SinkAvail mseq " + mseq + " with " + payload
                + " bytes after the BSDH (its header has " + SinkAvailHeader.LENGTH + ")");
            return;
        }
        sinkAh.wrap(bsdh.buffer(), off);
        long size = sinkAh.size();
        int rkey = sinkAh.rkey();
        long addr = sinkAh.addr();
        int nonDisc = sinkAh.nonDisc();
        postReceiveLocked(buf);
        large.onSinkAvail(size, rkey, addr, nonDisc);
    }

    private int ownMaxAdverts() {
        return largeFactory == null ? 1 : Math.max(1, Math.min(255, largeFactory.maxAdverts()));
    }

    private int offeredCapabilities() {
        // offered whatever the threshold: the socket option may turn it on later
        return largeFactory == null ? 0 : largeFactory.capabilities();
    }

    /** SinkAvail is offered only with SrcAvail zero copy: alone it means nothing (section 3). */
    private static int validCapabilities(int bits) {
        return (bits & LargeTransfers.CAPABILITY_ZCOPY) == 0 ? bits & ~LargeTransfers.CAPABILITY_SINK_AVAIL : bits;
    }

    private void openLargeTransfersLocked(int negotiated) {
        if ((negotiated & LargeTransfers.CAPABILITY_ZCOPY) != 0 && largeFactory != null) {
            large = largeFactory.open(new Port());
        }
    }

    private void handleHandshakeMessageLocked(int buf, int off, int mid, int mseq, int bufs, int len) {
        if (active && mid == MessageId.HELLO_ACK && mseq == 0 && state == State.HANDSHAKE) {
            HelloAck ack = new HelloAck().wrap(bsdh.buffer(), off);
            if (len < HelloAck.LENGTH || ack.majorVersion() != Hello.VERSION >>> 4 || ack.maxAdverts() == 0
                || ack.actualRcvSize() < SdpOptions.BUFFER_BYTES_MIN || ack.actualRcvSize() > SdpOptions.BUFFER_BYTES_MAX
                || bufs > CreditFlowControl.MAX_BUFS) {
                violationLocked(Violation.BAD_HELLO, "HelloAck len " + len + " version " + ack.majorVersion() + " adverts "
                    + ack.maxAdverts() + " actrcvsz " + ack.actualRcvSize() + " bufs " + bufs);
                return;
            }
            FlowControlScheme chosen = FlowControlScheme.fromCapabilities(ack.capabilities());
            // ring schemes' data travels in the ring; zero copy's inline bytes would come by buffers: not both
            if (chosen == null || chosen != FlowControlScheme.CREDIT && chosen != wish) {
                violationLocked(Violation.BAD_CAPABILITIES, "HelloAck capabilities 0x" + Integer.toHexString(ack.capabilities())
                    + " answer a Hello asking for " + wish.configName() + " (0x" + Integer.toHexString(wish.capabilityBit()) + ")");
                return;
            }
            if (chosen.usesRing() && !PacketizedFlowControl.validRingBytes(ack.ringBytes())) {
                violationLocked(Violation.BAD_RING, "HelloAck advertises a ring of " + ack.ringBytes() + " bytes");
                return;
            }
            lastRecvMseq = 0;
            negotiated = chosen.usesRing() ? ack.capabilities() & FlowControlScheme.CAPABILITY_RING_INLINE
                : validCapabilities(ack.capabilities() & offeredCapabilities());
            peerMaxAdverts = ack.maxAdverts();
            peerBufferBytes = (int) ack.actualRcvSize();
            peerCapacity = bufs;
            lastPeerBufs = bufs;
            lastPeerAck = 0;
            useSchemeLocked(chosen, ack.ringAddress(), ack.ringRkey(), (int) ack.ringBytes());
            fc.onSend(0, helloBufs, -1); // the Hello, counted by the credits that preceded the strategy
            fc.onHandshake(true, bufs);
            postReceiveLocked(buf);
            establishedLocked();
            return;
        }
        if (!active && mid == MessageId.HELLO && mseq == 0) {
            Hello hello = new Hello().wrap(bsdh.buffer(), off);
            if (len < Hello.LENGTH || hello.majorVersion() != Hello.VERSION >>> 4 || hello.maxAdverts() == 0
                || hello.localRcvSize() < SdpOptions.BUFFER_BYTES_MIN || hello.localRcvSize() > SdpOptions.BUFFER_BYTES_MAX
                || bufs < 1 || bufs > CreditFlowControl.MAX_BUFS) {
                violationLocked(Violation.BAD_HELLO, "Hello len " + len + " version " + hello.majorVersion() + " adverts "
                    + hello.maxAdverts() + " localrcvsz " + hello.localRcvSize() + " bufs " + bufs);
                return;
            }
            FlowControlScheme offered = FlowControlScheme.fromCapabilities(hello.capabilities());
            if (offered == null) {
                violationLocked(Violation.BAD_CAPABILITIES, "Hello capabilities 0x" + Integer.toHexString(hello.capabilities())
                    + " (known: 0x" + Integer.toHexString(FlowControlScheme.KNOWN_BITS) + ", one at most)");
                return;
            }
            FlowControlScheme chosen = FlowControlScheme.negotiate(offered, wish);
            if (chosen.usesRing() && !PacketizedFlowControl.validRingBytes(hello.ringBytes())) {
                violationLocked(Violation.BAD_RING, "Hello advertises a ring of " + hello.ringBytes() + " bytes");
                return;
            }
            if (state == State.CONNECTING) {
                transition(State.HANDSHAKE); // the Hello can overtake our ESTABLISHED event
            }
            lastRecvMseq = 0;
            peerBufferBytes = (int) hello.localRcvSize();
            peerCapacity = bufs;
            lastPeerBufs = bufs;
            useSchemeLocked(chosen, hello.ringAddress(), hello.ringRkey(), (int) hello.ringBytes());
            fc.onHandshake(false, bufs);
            postReceiveLocked(buf);
            int ctrl = ctrlSlotOffset();
            negotiated = chosen.usesRing() ? hello.capabilities() & FlowControlScheme.CAPABILITY_RING_INLINE
                : validCapabilities(hello.capabilities() & offeredCapabilities());
            peerMaxAdverts = hello.maxAdverts();
            HelloAck helloAck = new HelloAck().wrap(bsdh.buffer(), ctrl).put(ownMaxAdverts(), bufferBytes,
                hello.ipVersion() == 6 ? 6 : 4, negotiated | chosen.capabilityBit());
            if (chosen.usesRing()) {
                helloAck.putRing(ringMr.address() + RING_BASE, ringMr.rkey(), ringBytes);
            }
            postControlLocked(MessageId.HELLO_ACK, HelloAck.LENGTH, 0);
            if (state == State.HANDSHAKE) {
                establishedLocked();
            }
            return;
        }
        if (mid == MessageId.HELLO || mid == MessageId.HELLO_ACK) {
            violationLocked(Violation.SECOND_HELLO, MessageId.name(mid) + " mseq " + mseq + " to the "
                + (active ? "active" : "passive") + " side");
        } else if (!MessageId.isDefined(mid)) {
            violationLocked(Violation.UNKNOWN_MID, "mid " + MessageId.name(mid) + " before the handshake");
        } else {
            violationLocked(Violation.DATA_BEFORE_HELLO, MessageId.name(mid) + " mseq " + mseq + " before "
                + (active ? "HelloAck" : "Hello"));
        }
    }

    /** Installs the negotiated scheme's strategy (before its {@code onHandshake}). */
    private void useSchemeLocked(FlowControlScheme scheme, long ringAddress, int ringRkey, int peerRingBytes) {
        fc = scheme.create(options.deviceMessages());
        schemeChosen = true;
        messagePerWrite = scheme == FlowControlScheme.CREDIT && !options.creditCoalesce();
        if (scheme.usesRing()) {
            ring = (PacketizedFlowControl) fc;
            ring.onRings(ringBytes, peerRingBytes);
            peerRingAddress = ringAddress;
            peerRingRkey = ringRkey;
        }
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, "conn.flowControl", connectionId, scheme.ordinal(), wish.ordinal());
        }
    }

    private void establishedLocked() {
        goal = Math.min(bufferBytes, peerBufferBytes) - Bsdh.LENGTH;
        openLargeTransfersLocked(negotiated);
        if (connectTimer != null) {
            connectTimer.cancel(false);
        }
        transition(State.ESTABLISHED);
        stack.statistics().onEstablished();
        ConnectionEvents.established(this, stack.device().name(), cmId.localAddress(), remote);
        if (options.keepAlive()) {
            scheduleKeepAliveLocked();
        }
        if (owner != null) {
            pendingOwnerNotice = true;
        }
    }

    // ------------------------------------------------------------------ sending

    private void transmitLocked() {
        if (state != State.ESTABLISHED || released) {
            return;
        }
        if (stalled && fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            stallEndsLocked(false); // credits came back
        }
        if (!(ring != null ? transmitRingLocked() : transmitSlotsLocked())) {
            return;
        }
        if (large != null) {
            large.transmit();
            if (state != State.ESTABLISHED || released) {
                return;
            }
        }
        if (outputShut && !disconnSent && allDataPostedLocked() && mayPostControlLocked(FlowControl.DATA)
            && ctrlPosted - ctrlCompleted < CTRL_SLOTS) {
            disconnSent = true;
            traceRare("conn.disconnSent");
            postControlLocked(MessageId.DISCONN, Bsdh.LENGTH, lastRecvMseq);
        }
        if (state == State.ESTABLISHED && ring != null && ring.ringAckNeeded() && mayPostControlLocked(FlowControl.DATA)
            && ctrlPosted - ctrlCompleted < CTRL_SLOTS) {
            mem.putInt(ctrlSlotOffset() + RingMessages.RING_ACK_CONSUMED_OFFSET, ring.takeConsumedForWire());
            postControlLocked(MessageId.RING_ACK, RingMessages.RING_ACK_LENGTH, lastRecvMseq);
        }
        if (state == State.ESTABLISHED && fc.creditUpdateNeeded(posted, lastRecvMseq, recvCount)
            && mayPostControlLocked(FlowControl.CREDIT_UPDATE) && ctrlPosted - ctrlCompleted < CTRL_SLOTS) {
            postControlLocked(MessageId.DATA, Bsdh.LENGTH, lastRecvMseq);
        }
    }

    /**
     * Whether a control message (DisConn, credit update, RingAck) or a RingData may be posted: with a
     * credit for it, or — when the device holds messages until the peer has a buffer (NIC-assisted) —
     * always: both sides can have sent beyond their credits, and a message waiting for credits only the
     * other side's update could give would wait for ever.
     */
    private boolean mayPostControlLocked(int kind) {
        return fc.canSend(kind, posted, lastRecvMseq) || fc.deviceMessages() > 0;
    }

    /**
     * Credit-based: posts closed slots while the peer has credits, and the open slot by Nagle's rule.
     *
     * @return false when a post failed (the connection failed)
     */
    private boolean transmitSlotsLocked() {
        while (slotPosted < slotOpen) {
            if (!fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
                return true;
            }
            if (!postDataLocked()) {
                return false;
            }
        }
        if (openBytes > 0 && (noDelay || slotCompleted == slotPosted || outputShut || !fc.holdsPartialMessages())
            && fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            closeOpenSlotLocked();
            return postDataLocked();
        }
        return true;
    }

    /**
     * Packetized: RDMA-writes what waits in the send ring into the peer's ring, as far as its free bytes
     * go, with no Nagle hold (seed 001 §4.1.3: sent while there is room, coalesced only when there is
     * none); then announces with one RingData everything written since the last one, while no RingData
     * is in flight. One notification covers several WRITEs: a WRITE posted behind a RingData cannot take
     * effect before that message was accepted (RC order; SoftRdma's wires hold it until it is answered),
     * so a RingData per WRITE would make every WRITE wait for the previous run's answer, and the reader
     * handle a notification per write. The RingData of runs already written is posted from any context:
     * it moves no held data (the WRITEs went inside the application's calls).
     *
     * <p>NIC-assisted, whose held data may move from any context, does not post WRITEs behind a RingData
     * in flight: the bytes wait in the send ring and go as one WRITE, with the next RingData, when that
     * one completes. The reader sees them no later (only that RingData announces them, and it could not
     * go sooner), and the device does one WRITE where it did one per write, each of which it had to
     * hold until the RingData before it was answered.
     *
     * @return false when a post failed (the connection failed)
     */
    private boolean transmitRingLocked() {
        if (inlineRunLocked()) {
            return postRingNoteLocked((int) (streamWritten - streamPosted));
        }
        boolean holdBehindNote = fc.movesDataWithoutApplication() && notePosted != noteCompleted;
        while (streamPosted < streamWritten && dataMayMoveLocked() && unannouncedWrites < sendCount && !holdBehindNote) {
            int space = ring.ringSpace();
            if (space <= 0) {
                break;
            }
            if (!postRingWritesLocked((int) Math.min(streamWritten - streamPosted, space))) {
                return false;
            }
        }
        if (streamAnnounced < streamPosted && notePosted == noteCompleted && mayPostControlLocked(FlowControl.DATA)) {
            if (!postRingNoteLocked(0)) {
                return false;
            }
        }
        return deviceCount == 0 || transmitDeviceLocked();
    }

    /**
     * NIC-assisted, when the peer's ring is full: hands what waits in the send ring to the device as
     * Data messages of at most the virtual window W (a receive buffer's payload), beyond the ring and
     * the credits; the device sends each as the peer posts a buffer (RNR retry), whatever this side's
     * threads do. At most {@link #deviceCount} at a time (the device-handled part); a message shorter
     * than W goes only when the device holds none of ours, so later writes coalesce into W-sized ones
     * (the software-handled part) until a device message completes — the "interrupt" that brings the
     * progress thread here (seed 001 §4.3.2). Every ring write before a device message must be
     * announced first: the peer reads the stream in message order.
     *
     * @return false when a post failed (the connection failed)
     */
    private boolean transmitDeviceLocked() {
        while (streamPosted < streamWritten && ring.ringSpace() <= 0 && streamAnnounced == streamPosted
            && deviceOutstanding < deviceCount && dataMayMoveLocked()) {
            int n = (int) Math.min(streamWritten - streamPosted, goal);
            if (n < goal && deviceOutstanding > 0 && !outputShut) {
                break;
            }
            if (!postDeviceDataLocked(n)) {
                return false;
            }
        }
        return true;
    }

    /** NIC-assisted: posts {@code payload} bytes of the send ring at its posted mark as one Data message for the device. */
    private boolean postDeviceDataLocked(int payload) {
        int slot = (int) (devicePosted % deviceCount);
        int off = deviceBase + slot * DEVICE_SLOT_BYTES;
        int len = Bsdh.LENGTH + payload;
        int mseq = putDataHeaderLocked(off, len);
        int local = (int) (streamPosted % sendRingBytes);
        int first = Math.min(payload, sendRingBytes - local);
        gather.clear().wrId(KIND_DEVICE | slot).opcode(Opcode.SEND).flags(dataSendFlagsLocked(len))
            .sge(0, mrAddress + off, Bsdh.LENGTH, lkey).sge(1, mrAddress + sendBase + local, first, lkey);
        if (first < payload) {
            gather.sge(2, mrAddress + sendBase, payload - first, lkey); // the run wraps round the send ring's end
        }
        int rc = qp.postSend(gather);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of device Data mseq " + mseq + " failed (errno " + rc + ")", false, true);
            return false;
        }
        streamPosted += payload;
        streamAnnounced = streamPosted; // the message announces itself
        deviceEnd[slot] = streamPosted;
        devicePosted++;
        deviceOutstanding++;
        bytesSent += payload;
        messagesSent++;
        return true;
    }

    /**
     * Packetized: whether the bytes waiting in the send ring go better inside a RingData than by RDMA
     * WRITE: a short run (it and the RingData fit the device's inline limit) with nothing written and
     * unannounced and no RingData in flight, so one work request does what a WRITE and a SEND would.
     */
    private boolean inlineRunLocked() {
        long n = streamWritten - streamPosted;
        // maxInline <= 256 <= every peer's receive buffer (BUFFER_BYTES_MIN), so the RingData always fits one
        return n > 0 && (negotiated & FlowControlScheme.CAPABILITY_RING_INLINE) != 0
            && n <= maxInline - RingMessages.RING_DATA_LENGTH && streamAnnounced == streamPosted
            && notePosted == noteCompleted && n <= ring.ringSpace() && dataMayMoveLocked()
            && mayPostControlLocked(FlowControl.DATA);
    }

    /** RDMA-writes {@code n} bytes of the send ring at its posted mark into the peer's ring (one to three WRITEs). */
    private boolean postRingWritesLocked(int n) {
        int peerRing = ring.peerRingBytes();
        long pos = streamPosted;
        int remote = ring.ringTailOffset();
        for (int left = n; left > 0;) {
            int local = (int) (pos % sendRingBytes);
            int piece = Math.min(left, Math.min(sendRingBytes - local, peerRing - remote));
            swr.clear().wrId(KIND_RING_WRITE).opcode(Opcode.RDMA_WRITE).flags(0)
                .sge(0, mrAddress + sendBase + local, piece, lkey).remote(peerRingAddress + remote, peerRingRkey);
            int rc = qp.postSend(swr);
            if (rc != Errno.OK) {
                failLocked(Failure.DEVICE_ERROR, "post of a ring write failed (errno " + rc + ")", false, true);
                return false;
            }
            unannouncedWrites++;
            pos += piece;
            left -= piece;
            remote = remote + piece == peerRing ? 0 : remote + piece;
        }
        ring.onRingWrite(n);
        streamPosted += n;
        return true;
    }

    /**
     * Posts one RingData for the bytes written into the peer's ring since the last one, or — with
     * {@code inline} bytes — for a run it carries itself (nothing written and unannounced before it).
     */
    private boolean postRingNoteLocked(int inline) {
        int note = (int) (notePosted % sendCount);
        int off = noteBase + note * NOTE_SLOT_BYTES;
        if (inline > 0) {
            for (int done = 0; done < inline;) {
                int local = (int) ((streamPosted + done) % sendRingBytes);
                int piece = Math.min(inline - done, sendRingBytes - local);
                mem.put(off + RingMessages.RING_DATA_LENGTH + done, mem, sendBase + local, piece);
                done += piece;
            }
            ring.onRingWrite(inline);
            streamPosted += inline;
        }
        int n = (int) (streamPosted - streamAnnounced);
        int start = Math.floorMod(ring.ringTailOffset() - n, ring.peerRingBytes());
        int len = RingMessages.RING_DATA_LENGTH + inline;
        mem.putInt(off + RingMessages.RING_DATA_OFFSET_OFFSET, start);
        mem.putInt(off + RingMessages.RING_DATA_LENGTH_OFFSET, n);
        mem.putInt(off + RingMessages.RING_DATA_CONSUMED_OFFSET, ring.takeConsumedForWire());
        int mseq = nextMseq++;
        lastDataMseq = mseq;
        int bufs = Math.min(posted, Bsdh.MAX_BUFS);
        bsdh.at(off).put(MessageId.RING_DATA, 0, bufs, len, mseq, lastRecvMseq);
        fc.onSend(mseq, bufs, lastRecvMseq);
        swr.clear().wrId(KIND_NOTE | note).opcode(Opcode.SEND)
            .flags(dataSendFlagsLocked(len)).sge(0, mrAddress + off, len, lkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of RingData mseq " + mseq + " failed (errno " + rc + ")", false, true);
            return false;
        }
        streamAnnounced = streamPosted;
        unannouncedWrites = 0;
        noteEnd[note] = streamPosted;
        notePosted++;
        bytesSent += n;
        messagesSent++;
        return true;
    }

    /**
     * Numbers a Data message of {@code len} bytes (BSDH included) and writes its BSDH at {@code off},
     * accounted by the flow control.
     *
     * @return its sequence number
     */
    private int putDataHeaderLocked(int off, int len) {
        int mseq = nextMseq++;
        lastDataMseq = mseq;
        int bufs = Math.min(posted, Bsdh.MAX_BUFS);
        bsdh.at(off).put(MessageId.DATA, 0, bufs, len, mseq, lastRecvMseq);
        fc.onSend(mseq, bufs, lastRecvMseq);
        return mseq;
    }

    /** Posts the next closed slot as one Data message. */
    private boolean postDataLocked() {
        int slot = (int) (slotPosted % sendCount);
        int off = sendBase + slot * bufferBytes;
        int payload = slotLen[slot];
        int len = Bsdh.LENGTH + payload;
        int mseq = putDataHeaderLocked(off, len);
        swr.clear().wrId(KIND_DATA | slot).opcode(Opcode.SEND)
            .flags(dataSendFlagsLocked(len)).sge(0, mrAddress + off, len, lkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of Data mseq " + mseq + " failed (errno " + rc + ")", false, true);
            return false;
        }
        slotPosted++;
        if (large != null) {
            large.onStreamMessage(true); // voids the peer's pending SinkAvail advertisements
        }
        bytesSent += payload;
        messagesSent++;
        return true;
    }

    /** Posts a SrcAvail (BSDH, SrcAH, inline bytes) in the next send slot; see {@link LargeTransfers.Port}. */
    private int postSrcAvailLocked(ByteBuffer src, int inlineBytes, int len, int rkey, long vaddr) {
        if (state != State.ESTABLISHED || released || slotPosted != slotOpen || openBytes != 0
            || slotOpen - slotCompleted == sendCount || inlineBytes > goal - SrcAvailHeader.LENGTH
            || !fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            return -1;
        }
        int slot = (int) (slotOpen % sendCount);
        int off = sendBase + slot * bufferBytes;
        int msgLen = SrcAvailHeader.PAYLOAD_OFFSET + inlineBytes;
        mem.put(off + SrcAvailHeader.PAYLOAD_OFFSET, src, src.position(), inlineBytes);
        srcAh.wrap(bsdh.buffer(), off).put(len, rkey, vaddr);
        int mseq = nextMseq++;
        lastDataMseq = mseq;
        int bufs = Math.min(posted, Bsdh.MAX_BUFS);
        bsdh.at(off).put(MessageId.SRC_AVAIL, 0, bufs, msgLen, mseq, lastRecvMseq);
        fc.onSend(mseq, bufs, lastRecvMseq);
        slotLen[slot] = inlineBytes;
        slotOpen++;
        swr.clear().wrId(KIND_DATA | slot).opcode(Opcode.SEND)
            .flags(dataSendFlagsLocked(msgLen)).sge(0, mrAddress + off, msgLen, lkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of SrcAvail mseq " + mseq + " failed (errno " + rc + ")", false, true);
            return -1;
        }
        slotPosted++;
        large.onStreamMessage(true);
        bytesSent += inlineBytes;
        messagesSent++;
        return mseq;
    }

    private int postZcopyControlLocked(int mid, int size) {
        if (state != State.ESTABLISHED || released || ctrlPosted - ctrlCompleted >= CTRL_SLOTS
            || !fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            return -1;
        }
        int len = Bsdh.LENGTH;
        if (mid == MessageId.RDMA_RD_COMPL || mid == MessageId.RDMA_WR_COMPL) {
            complH.wrap(bsdh.buffer(), ctrlSlotOffset()).put(size);
            len = RdmaComplHeader.MESSAGE_LENGTH;
        } else if (mid == MessageId.SINK_AVAIL) {
            len = SinkAvailHeader.MESSAGE_LENGTH; // the SinkAH is in the slot already (postSinkAvailLocked)
        }
        long before = ctrlPosted;
        int mseq = nextMseq;
        postControlLocked(mid, len, lastRecvMseq);
        return ctrlPosted != before ? mseq : -1;
    }

    private int postSinkAvailLocked(int size, int rkey, long addr, int nonDisc) {
        if (state != State.ESTABLISHED || released || ctrlPosted - ctrlCompleted >= CTRL_SLOTS
            || !fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            return -1;
        }
        sinkAh.wrap(bsdh.buffer(), ctrlSlotOffset()).put(size, rkey, addr, nonDisc);
        return postZcopyControlLocked(MessageId.SINK_AVAIL, 0);
    }

    /** An RDMA WRITE into the peer's SinkAvail buffer and its RdmaWrCompl behind it: both or neither. */
    private int postRdmaWriteLocked(long tag, long localAddress, int localKey, int len, long remoteAddress, int rkey) {
        if (state != State.ESTABLISHED || released || qp == null || ctrlPosted - ctrlCompleted >= CTRL_SLOTS
            || !fc.canSend(FlowControl.DATA, posted, lastRecvMseq)) {
            return -1;
        }
        swr.clear().wrId(KIND_ZCOPY | (tag & INDEX_MASK)).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
            .sge(0, localAddress, len, localKey).remote(remoteAddress, rkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of an RDMA WRITE of " + len + " bytes failed (errno " + rc + ")", false, true);
            return -1;
        }
        // queue-pair order puts the written bytes in place before the RdmaWrCompl arrives
        return postZcopyControlLocked(MessageId.RDMA_WR_COMPL, len);
    }

    private boolean postRdmaReadLocked(long tag, long localAddress, int localKey, int len, long remoteAddress, int rkey) {
        if (released || qp == null) {
            return false;
        }
        swr.clear().wrId(KIND_ZCOPY | (tag & INDEX_MASK)).opcode(Opcode.RDMA_READ).flags(SendFlags.SIGNALED)
            .sge(0, localAddress, len, localKey).remote(remoteAddress, rkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of an RDMA READ of " + len + " bytes failed (errno " + rc + ")", false, true);
            return false;
        }
        return true;
    }

    /** The engine's services for {@link LargeTransfers}; every method runs under {@link #lock}. */
    private final class Port implements LargeTransfers.Port {
        @Override
        public long connectionId() {
            return connectionId;
        }

        @Override
        public SdpOptions options() {
            return options;
        }

        @Override
        public ProtectionDomain protectionDomain() {
            return stack.pd();
        }

        @Override
        public boolean outputDrained() {
            return slotPosted == slotOpen && openBytes == 0;
        }

        @Override
        public int maxSrcAvailInline() {
            return goal - SrcAvailHeader.LENGTH;
        }

        @Override
        public int postSrcAvail(ByteBuffer src, int inlineBytes, int len, int rkey, long vaddr) {
            return postSrcAvailLocked(src, inlineBytes, len, rkey, vaddr);
        }

        @Override
        public int postControl(int mid, int size) {
            return postZcopyControlLocked(mid, size);
        }

        @Override
        public int peerMaxAdverts() {
            return peerMaxAdverts;
        }

        @Override
        public boolean postRdmaRead(long tag, long localAddress, int localKey, int len, long remoteAddress, int rkey) {
            return postRdmaReadLocked(tag, localAddress, localKey, len, remoteAddress, rkey);
        }

        @Override
        public boolean sinkAvailNegotiated() {
            return (negotiated & LargeTransfers.CAPABILITY_SINK_AVAIL) != 0;
        }

        @Override
        public int postSinkAvail(int size, int rkey, long addr, int nonDisc) {
            return postSinkAvailLocked(size, rkey, addr, nonDisc);
        }

        @Override
        public int postRdmaWrite(long tag, long localAddress, int localKey, int len, long remoteAddress, int rkey) {
            return postRdmaWriteLocked(tag, localAddress, localKey, len, remoteAddress, rkey);
        }

        @Override
        public int lastReceivedMseq() {
            return lastRecvMseq;
        }

        @Override
        public void violation(Violation v, String detail) {
            violationLocked(v, detail);
        }

        @Override
        public void fail(String kind, String detail) {
            failLocked(Failure.DEVICE_ERROR, detail, true, true, kind);
        }

        @Override
        public boolean failed() {
            return state == State.FAILED || released;
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable task, long delayNs) {
            return stack.schedule(() -> {
                lock.lock();
                try {
                    if (!released && state != State.FAILED) {
                        task.run();
                    }
                } catch (RuntimeException e) {
                    internalErrorLocked(e);
                } finally {
                    unlockAndNotify();
                }
            }, delayNs);
        }
    }

    /**
     * The send flags of a Data, RingData or SrcAvail of {@code len} bytes: signaled, inline when it fits,
     * and solicited when it leaves us without the credits for Data: the peer's
     * stack takes it even while the peer's application makes no call, and answers with the credits its
     * reads freed ({@link #armSolicitedLocked}); without it a reader that stopped reading kept freed
     * buffers unannounced while our writer waited for them (PeerExitTwoJvmTest's halt case). Credit
     * updates are not marked: the message that made us starve has told the peer already, and marking
     * them too made jsdp-bench progress slower (1.0-1.7 ms per iteration at 500 µs of computation,
     * against 0.57-1.08 ms).
     */
    private int dataSendFlagsLocked(int len) {
        int starving = state == State.ESTABLISHED && !fc.canSend(FlowControl.DATA, posted, lastRecvMseq) ? SendFlags.SOLICITED : 0;
        return SendFlags.SIGNALED | starving | (len <= maxInline ? SendFlags.INLINE : 0);
    }

    /**
     * Control messages sent solicited ({@link #armSolicitedLocked}): zero copy's, and DisConn and
     * AbortConn, which change the connection's state even while the peer's application makes no call
     * (as TCP's kernel takes a FIN or a RST at once: snapshots, statistics and the peer's resources
     * follow without waiting for a read).
     */
    private static boolean isSolicitedControl(int mid) {
        return switch (mid) {
            case MessageId.RDMA_RD_COMPL, MessageId.RDMA_WR_COMPL, MessageId.SEND_SM, MessageId.SRC_AVAIL_CANCEL,
                MessageId.SINK_AVAIL, MessageId.SINK_AVAIL_CANCEL, MessageId.SINK_CANCEL_ACK,
                MessageId.DISCONN, MessageId.ABORT_CONN -> true;
            default -> false;
        };
    }

    private int ctrlSlotOffset() {
        return ctrlBase + (int) (ctrlPosted % CTRL_SLOTS) * CTRL_SLOT_BYTES;
    }

    /**
     * Posts a control message whose body (past the BSDH) is already in the next control slot.
     *
     * @param mseqAck the acknowledgement it carries; -1 for the Hello (nothing received), sent as 0
     */
    private void postControlLocked(int mid, int len, int mseqAck) {
        int off = ctrlSlotOffset();
        int mseq = mid == MessageId.HELLO || mid == MessageId.HELLO_ACK ? 0 : nextMseq;
        nextMseq = mseq + 1;
        int bufs = Math.min(posted, Bsdh.MAX_BUFS);
        bsdh.at(off).put(mid, 0, bufs, len, mseq, Math.max(mseqAck, 0));
        fc.onSend(mseq, bufs, mseqAck);
        if (mid == MessageId.HELLO) {
            helloBufs = bufs;
        }
        // these wake a peer whose application makes no call (armSolicitedLocked)
        int solicited = isSolicitedControl(mid) ? SendFlags.SOLICITED : 0;
        swr.clear().wrId(KIND_CTRL | mid).opcode(Opcode.SEND)
            .flags(SendFlags.SIGNALED | solicited | (len <= maxInline ? SendFlags.INLINE : 0)).sge(0, mrAddress + off, len, lkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of " + MessageId.name(mid) + " failed (errno " + rc + ")", false, true);
            return;
        }
        ctrlPosted++;
        messagesSent++;
        if (TRACE.on(TraceLevel.HOT_INTERNALS)) {
            TRACE.record(TraceLevel.HOT_INTERNALS, "conn.ctrlSent", connectionId, mid, mseq, bufs);
        }
    }

    private boolean postReceiveLocked(int buf) {
        if (released || qp == null) {
            return false;
        }
        rwr.wrId(KIND_RECV | buf).numSge(0).sge(0, mrAddress + recvOffset(buf), bufferBytes, lkey);
        int rc = qp.postRecv(rwr);
        if (rc != Errno.OK) {
            failLocked(Failure.DEVICE_ERROR, "post of receive " + buf + " failed (errno " + rc + ")", false, true);
            return false;
        }
        posted++;
        return true;
    }

    // ------------------------------------------------------------------ keepalive

    private void scheduleKeepAliveLocked() {
        keepAliveTimer = stack.schedule(this::onKeepAliveTimer, TimeUnit.MILLISECONDS.toNanos(options.keepAliveTimeMs()));
    }

    private void onKeepAliveTimer() {
        lock.lock();
        stackContext = true;
        try {
            if (state != State.ESTABLISHED || released) {
                return;
            }
            progressLocked();
            if (activity == activityAtLastProbe && !keepAliveOutstanding) {
                // OFED: an unsignaled zero-length RDMA WRITE; a dead peer shows up as RETRY_EXC_ERR.
                swr.clear().wrId(KIND_KEEPALIVE).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED).remote(0, 0);
                int rc = qp.postSend(swr);
                if (rc == Errno.OK) {
                    keepAliveOutstanding = true;
                    armLocked();
                }
            }
            activityAtLastProbe = activity;
            if (state == State.ESTABLISHED) {
                scheduleKeepAliveLocked();
            }
        } finally {
            stackContext = false;
            unlockAndNotify();
        }
    }

    // ------------------------------------------------------------------ ending

    private void maybeFinishLocked() {
        if (state == State.ESTABLISHED && disconnReceived && disconnSendDone) {
            transition(State.FINISHED);
            cancelTimersLocked();
            maybeReleaseLocked();
        }
    }

    private void onDisconnectedLocked() {
        progressLocked(); // the peer's DisConn may be waiting in our queue
        if (state == State.FAILED || released) {
            return;
        }
        if (state == State.ESTABLISHED && disconnReceived && disconnSent) {
            disconnSendDone = true; // the peer disconnects only after it took our DisConn
            maybeFinishLocked();
            return;
        }
        if (state == State.FINISHED) {
            return;
        }
        if (disconnReceived && state == State.ESTABLISHED) {
            peerGoneLocked("disconnected by the peer after its DisConn, before ours"); // its stream had ended
            return;
        }
        // A dead peer's queue pair flushed ours before this event (the completions taken above decided
        // then); a peer that disconnects without DisConn while ours still runs is alive and aborted — its
        // AbortConn, best effort, was lost — so this is a reset, never an EOF that would end a cut stream.
        if (resetAfterUnreadLocked("disconnected by the peer without DisConn")) {
            return;
        }
        failLocked(state == State.ESTABLISHED ? Failure.RESET_BY_PEER : Failure.CONNECT_TIMEOUT,
            "disconnected by the peer without DisConn in " + state, false, state == State.ESTABLISHED);
    }

    /**
     * A peer that vanished (its queue pair flushed ours, or it disconnected without DisConn) after it had
     * read everything we sent, or after its DisConn: as TCP, whose kernel closes a dead process's sockets
     * with a FIN then, the connection ends like a half-close from the peer — reads give what arrived, then
     * EOF — and writes fail with a reset. It read everything when nothing of ours waits to be sent, the
     * peer's latest message acknowledged our latest Data, and it had all its receive buffers posted then.
     *
     * @return true when the connection was ended this way; false when it must fail as a reset
     */
    private boolean peerGoneIfEverythingReadLocked(String why) {
        if (state != State.ESTABLISHED) {
            return false;
        }
        if (disconnReceived) {
            // its stream had ended: what it had not read of ours is lost, as after a FIN then a RST
            peerGoneLocked("the peer went away after its DisConn (" + why + ")");
            return true;
        }
        boolean readEverything = allDataPostedLocked() && (ring == null || ring.peerConsumedAll())
            && (large == null || large.remoteBytes() == 0)
            && (lastDataMseq < 0 || lastPeerAck - lastDataMseq >= 0) && lastPeerBufs >= peerCapacity && peerCapacity > 0;
        if (!readEverything || peerMayHaveHeldDataLocked()) {
            // data lost with the peer's process must not look like the end of its stream
            return resetAfterUnreadLocked("the peer went away (" + why + ")");
        }
        peerGoneLocked("the peer went away after reading everything (" + why + ")");
        return true;
    }

    /**
     * Ends the connection as a half-close from a peer that is gone (Linux TCP after a FIN, or a FIN then
     * a RST): reads give what arrived, then EOF; writes fail with a reset.
     */
    private void peerGoneLocked(String why) {
        peerGone = true;
        disconnReceived = true;
        failure = Failure.RESET_BY_PEER;
        failureDetail = why + ": reads end, writes are reset";
        // the application sees an orderly end (EOF, as after a dead process's FIN): the record is kept, its log
        // line is RARE (tear-down), not ERROR — a normal exit of the peer is no error here
        Ffdc.capture(TraceLevel.RARE, "sdp", "connection.PEER_GONE", "connection " + connectionId + " " + failureDetail,
            snapshotLocked());
        transition(State.FINISHED);
        cancelTimersLocked();
        maybeReleaseLocked();
    }

    /**
     * Whether the peer may have had data it had not sent yet when it vanished: its latest message left it
     * out of credit (fewer than the two a Data message needs) as far as it knew — credits we advertised
     * after it do not count, as the peer may have died before it saw them, or after it posted data they
     * allowed that died with it — or, packetized, our ring was full as far as that message's
     * acknowledgement told it, so it may have been out of ring space. Its DisConn settles it: after one,
     * nothing more was to come.
     */
    private boolean peerMayHaveHeldDataLocked() {
        return fc.peerCredits() < 2 || ring != null && ring.peerMayBeOutOfRing();
    }

    /**
     * The peer reset the connection or vanished while its data was unread here and the application
     * still reads: as Linux TCP, the data it sent stays readable and the reset comes after it. The
     * connection ends (FINISHED, resources kept until the data is read or the channel closed); writes fail
     * at once with the reset.
     *
     * @return false when there is nothing to keep (the caller fails the connection as before)
     */
    private boolean resetAfterUnreadLocked(String why) {
        if (state != State.ESTABLISHED || appClosed || inputShut || !hasUnreadLocked()) {
            return false;
        }
        peerGone = true;
        resetAfterUnread = true;
        disconnReceived = true;
        failure = Failure.RESET_BY_PEER;
        failureDetail = why + " with " + unreadBytes + " bytes of its unread here: reads give them, then the reset";
        stack.statistics().onFailed(failure);
        Ffdc.capture("sdp", "connection." + failure.name(), "connection " + connectionId + " " + failure + ": " + failureDetail,
            snapshotLocked());
        transition(State.FINISHED);
        cancelTimersLocked();
        return true;
    }

    // ------------------------------------------------------------------ exit drain

    /**
     * Whether a JVM exiting now would lose nothing of this connection that TCP's kernel would still
     * deliver: after a close or shutdownOutput, our DisConn has completed (so every byte before it reached
     * the peer's receive buffers); with the output open, every byte written has been posted and its SEND
     * completed. A connection that ended or never got established has nothing to deliver.
     *
     * @return true when the process may end without cutting this connection's output off
     */
    boolean exitDrainDone() {
        lock.lock();
        try {
            progressLocked();
            return exitDrainDoneLocked();
        } finally {
            unlockAndNotify();
        }
    }

    private boolean exitDrainDoneLocked() {
        if (released || state != State.ESTABLISHED) {
            return true;
        }
        if (appClosed || outputShut) {
            return disconnSendDone;
        }
        return allDataPostedLocked() && slotCompleted == slotPosted && noteCompleted == notePosted
            && (large == null || !large.hasUndeliveredOutput());
    }

    /**
     * At JVM exit, after its written data was delivered: an established connection the application left
     * open gets its DisConn, as the kernel sends a FIN for a TCP socket a process leaves open.
     */
    void shutdownOutputAtExit() {
        lock.lock();
        try {
            if (state != State.ESTABLISHED || released || appClosed || outputShut) {
                return;
            }
        } finally {
            unlock();
        }
        shutdownOutput();
    }

    /**
     * Waits, at JVM exit, until {@link #exitDrainDone()} or the deadline (the stack's exit drain).
     *
     * @param deadlineNs {@link System#nanoTime()} to give up at
     * @return true when drained
     */
    boolean awaitExitDrain(long deadlineNs) {
        lock.lock();
        try {
            waiters++;
            try {
                for (;;) {
                    progressLocked();
                    if (exitDrainDoneLocked()) {
                        return true;
                    }
                    long left = deadlineNs - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    if (armLocked()) {
                        changed.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(10)));
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return exitDrainDoneLocked();
            } finally {
                waiters--;
            }
        } finally {
            unlockAndNotify();
        }
    }

    private void maybeReleaseLocked() {
        if (released) {
            return;
        }
        boolean done = state == State.FAILED || state == State.FINISHED && (appClosed || !hasUnreadLocked());
        if (!done) {
            return;
        }
        releaseLocked();
    }

    private void releaseLocked() {
        if (released) {
            return; // a failure inside a failure (a failed AbortConn post) already released
        }
        rnrRetriesLocked(); // the last read: the queue pair goes below
        released = true;
        endSetUpLocked();
        if (admitted) {
            admitted = false;
            stack.limits().released();
        }
        if (stalled) {
            stallEndsLocked(true);
        }
        ConnectionStats last = statsLocked();
        stack.statistics().onReleased(last);
        ConnectionEvents.closed(this, cmId.localAddress(), remote, last,
            failure == null ? null : failure + ": " + failureDetail);
        cancelTimersLocked();
        stack.unregister(cmId);
        if (qp != null) {
            try {
                cmId.disconnect();
            } catch (VerbsException e) {
                // not connected (any more): nothing to tell the peer
            }
        }
        cmId.close(); // destroys the queue pair: the device touches our memory no more
        if (large != null) {
            large.release(); // its registrations are unreachable now: no peer can read them
        }
        mr.close();
        memory.close();
        if (ringMr != null) {
            ringMr.close();
            ringMemory.close();
        }
        closeCqLocked(0);
        signalAllLocked();
        traceRare("conn.released");
    }

    /**
     * After the stack's threads ended: close the queue if an unacknowledged event held it open. A device
     * thread may still be handing an event over (it takes the event, finds this lock held and gives it
     * back): the close is tried again, without the lock, for up to a second.
     */
    void finalCleanup() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        for (;;) {
            lock.lock();
            try {
                if (!released || cqClosed) {
                    return;
                }
                boolean last = System.nanoTime() - deadline >= 0;
                closeCqLocked(last ? Integer.MAX_VALUE : FINAL_ATTEMPT);
                if (cqClosed || last) {
                    return;
                }
            } finally {
                unlock();
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** The attempt number of {@link #finalCleanup}'s tries but its last: a failure schedules nothing. */
    private static final int FINAL_ATTEMPT = -1;

    private void closeCqLocked(int attempt) {
        if (cqClosed) {
            return;
        }
        try {
            cq.close();
            cqClosed = true;
            stack.unregister(cq);
        } catch (VerbsException e) {
            if (attempt == FINAL_ATTEMPT) {
                return; // finalCleanup tries again itself
            }
            // an event the progress thread has not acknowledged yet: try again shortly
            if (attempt < 100 && !cqClosed) {
                stack.schedule(() -> {
                    lock.lock();
                    try {
                        closeCqLocked(attempt + 1);
                    } finally {
                        unlock();
                    }
                }, TimeUnit.MILLISECONDS.toNanos(10));
            } else {
                TRACE.record(TraceLevel.ERROR, "conn.cqCloseFailed", e);
                stack.unregister(cq);
            }
        }
    }

    private void cancelTimersLocked() {
        if (connectTimer != null) {
            connectTimer.cancel(false);
        }
        if (closeTimer != null) {
            closeTimer.cancel(false);
        }
        if (keepAliveTimer != null) {
            keepAliveTimer.cancel(false);
        }
    }

    private int brokenMarkersLocked() {
        int broken = ringMem == null ? 0 : brokenRingMarkersLocked();
        for (int i = 0; i <= recvCount; i++) {
            if (!StructureMarkers.check(mem, 0, i, bufferBytes)) {
                broken++;
            }
        }
        return broken;
    }

    private int recvOffset(int buf) {
        return StructureMarkers.bufferOffset(buf, bufferBytes);
    }

    /** A broken structure marker around receive buffer {@code buf}: abort, never hand on its bytes. */
    private void corruptionLocked(int buf, String when) {
        int marker = StructureMarkers.brokenAround(mem, 0, buf, bufferBytes);
        failLocked(Failure.CORRUPTION, "receive buffer " + buf + " " + when + ": " + StructureMarkers.describe(
            "the receive buffers of connection " + connectionId, mem, 0, Math.max(marker, buf), bufferBytes),
            true, true, "corruption.RECEIVE_BUFFER");
    }

    /** The ring's two structure markers (before and after it) that do not hold their values. */
    private int brokenRingMarkersLocked() {
        return (StructureMarkers.check(ringMem, 0, 0, ringBytes) ? 0 : 1) + (StructureMarkers.check(ringMem, 0, 1, ringBytes) ? 0 : 1);
    }

    /**
     * A broken structure marker around our packetized receive ring: abort, never hand on its bytes. The
     * ring's memory region covers the markers, so a peer's RDMA WRITE that runs over either end of the
     * ring lands on one (a write beyond them the device refuses).
     */
    private void ringCorruptionLocked(String when) {
        int marker = StructureMarkers.brokenAround(ringMem, 0, 0, ringBytes);
        failLocked(Failure.CORRUPTION, "receive ring " + when + ": marker " + Math.max(marker, 0) + " ("
            + (marker == 1 ? "after" : "before") + " the ring's " + ringBytes + " bytes): " + StructureMarkers.describe(
            "the receive ring of connection " + connectionId, ringMem, 0, Math.max(marker, 0), ringBytes),
            true, true, "corruption.RING");
    }

    /** The packetized receive ring's memory, its markers included (null unless packetized was asked for). */
    ByteBuffer ringMemoryForTests() {
        return ringMem;
    }

    /** The connection's registered memory, receive buffers first: for tests that play a stray write. */
    ByteBuffer memoryForTests() {
        return mem;
    }

    private void violationLocked(Violation v, String detail) {
        failLocked(Failure.PROTOCOL_VIOLATION, v.name() + ": " + v.description() + ": " + detail, true, true,
            "protocol." + v.name());
    }

    void internalError(Throwable e) {
        lock.lock();
        try {
            if (e instanceof InternalError fault) {
                memoryFaultLocked(fault);
            } else {
                internalErrorLocked(e);
            }
        } finally {
            unlockAndNotify();
        }
    }

    private void internalErrorLocked(Throwable e) {
        TRACE.record(TraceLevel.ERROR, "conn.internalError", e);
        failLocked(Failure.DEVICE_ERROR, "internal error: " + e, true, true, "internal." + e.getClass().getSimpleName());
    }

    void stackClosing() {
        lock.lock();
        try {
            failLocked(Failure.STACK_CLOSED, "the SDP stack closed", true, false);
        } finally {
            unlockAndNotify();
        }
    }

    private void failLocked(Failure f, String detail, boolean tellPeer, boolean ffdc) {
        failLocked(f, detail, tellPeer, ffdc, "connection." + f.name());
    }

    /**
     * Fails the connection: state FAILED, an AbortConn to the peer when asked and possible, a
     * disconnect (which flushes our queue pair and so wakes parked waiters), resources released.
     */
    private void failLocked(Failure f, String detail, boolean tellPeer, boolean ffdc, String ffdcKind) {
        if (state == State.FAILED || released) {
            return;
        }
        State from = state;
        failure = f;
        failureDetail = detail;
        stack.statistics().onFailed(f);
        if (ffdc) {
            Ffdc.capture("sdp", ffdcKind, "connection " + connectionId + " " + f + ": " + detail, snapshotLocked());
        }
        boolean abortPosted = false;
        if (tellPeer && qp != null && (from == State.ESTABLISHED || from == State.HANDSHAKE)
            && ctrlPosted - ctrlCompleted < CTRL_SLOTS && (fc.credits() >= 1 || fc.deviceMessages() > 0)) {
            // best effort: an AbortConn the disconnect flushes still leaves the peer a DISCONNECTED
            long before = ctrlPosted;
            postControlLocked(MessageId.ABORT_CONN, Bsdh.LENGTH, Math.max(lastRecvMseq, 0));
            abortPosted = ctrlPosted != before && !released;
        }
        transition(State.FAILED);
        TRACE.message(TraceLevel.RARE, "conn.failed", "connection " + connectionId + " failed: " + f + ": " + detail);
        discardUnreadLocked();
        if (abortPosted) {
            awaitControlSentLocked();
        }
        releaseLocked();
        if (owner != null) {
            pendingOwnerNotice = true;
        }
    }

    /**
     * Gives the AbortConn just posted a moment (at most {@link #ABORT_SEND_NS}) to reach the peer before
     * the disconnect destroys our queue pair: a peer that saw only the DISCONNECTED, having read
     * everything of ours, would end with EOF (a vanished peer, as TCP after a FIN) instead of the reset
     * an abortive close owes it. Completions taken meanwhile only count (the connection is FAILED).
     */
    private void awaitControlSentLocked() {
        long deadline = System.nanoTime() + ABORT_SEND_NS;
        for (int spins = 0; ctrlCompleted < ctrlPosted && !released && System.nanoTime() - deadline < 0; spins++) {
            if (drainLocked() == 0) {
                if (spins < 100) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(20_000); // the peer's side may need this CPU to take the message
                }
            }
        }
    }

    private void transition(State to) {
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, "conn.state", connectionId, state.ordinal(), to.ordinal());
        }
        state = to;
        if (to != State.CONNECTING && to != State.HANDSHAKE) {
            endSetUpLocked();
        }
        signalAllLocked();
    }

    /**
     * Takes over the admission and the set-up slot the stack took for this connection from its
     * {@link ConnectionLimits} (before anything could end it): the set-up slot goes back when the
     * handshake ends, the admission when the connection releases its resources.
     */
    void holdAdmission() {
        lock.lock();
        try {
            admitted = true;
            settingUp = true;
            if (released || state != State.CONNECTING && state != State.HANDSHAKE) {
                endSetUpLocked();
            }
            if (released) {
                admitted = false;
                stack.limits().released();
            }
        } finally {
            unlock();
        }
    }

    private void endSetUpLocked() {
        if (settingUp) {
            settingUp = false;
            stack.limits().handshakeEnded();
        }
    }

    private void traceRare(String event) {
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, event, connectionId);
        }
    }

    /** Counts a zero-copy event that let go of the last application buffer held ({@link #heldReleases}). */
    private void countHeldReleaseLocked(boolean heldBefore) {
        if (heldBefore && !large.holdsOutput()) {
            heldReleases++;
        }
    }

    /** Unlocks, then tells the listener and the owning SDP listener what changed (no lock held). */
    private void unlockAndNotify() {
        unlockAndNotifyOnly();
        if (eventPending) {
            handlePendingEvent(false);
        }
    }

    private void unlockAndNotifyOnly() {
        solicitedArmWhenIdleLocked(); // a reader that never waited had no event to start the idle check
        ReadinessListener l = listener;
        boolean ownerNotice = pendingOwnerNotice;
        pendingOwnerNotice = false;
        SdpListener o = owner;
        int ops = 0;
        boolean notify = false;
        if (l != null) {
            ops = readyOpsLocked();
            notify = ops != lastNotifiedOps || heldReleases != lastNotifiedHeldReleases;
            lastNotifiedOps = ops;
            lastNotifiedHeldReleases = heldReleases;
        }
        lock.unlock();
        if (ownerNotice && o != null) {
            o.onHandshakeDone(this);
        }
        if (notify) {
            l.onReady(this, ops);
        }
    }

    // ------------------------------------------------------------------ inspection

    /**
     * The state.
     *
     * @return the current state
     */
    public State state() {
        lock.lock();
        try {
            return state;
        } finally {
            unlock();
        }
    }

    /**
     * Why the connection failed.
     *
     * @return the failure, or null while it has not
     */
    public Failure failure() {
        lock.lock();
        try {
            return failure;
        } finally {
            unlock();
        }
    }

    /**
     * The failure in words.
     *
     * @return e.g. "PROTOCOL_VIOLATION: MSEQ_OUT_OF_ORDER …", or null
     */
    public String failureDetail() {
        lock.lock();
        try {
            return failure == null ? null : failure + ": " + failureDetail;
        } finally {
            unlock();
        }
    }

    /** The queue pair's number, or -1 before it exists (tests). */
    int queuePairNumber() {
        lock.lock();
        try {
            return qp == null ? -1 : qp.qpNumber();
        } finally {
            unlock();
        }
    }

    /**
     * Whether the device resources are freed.
     *
     * @return true once released
     */
    public boolean isReleased() {
        lock.lock();
        try {
            return released;
        } finally {
            unlock();
        }
    }

    /**
     * A JVM-wide number naming this connection in traces and FFDC records.
     *
     * @return the id
     */
    public long id() {
        return connectionId;
    }

    /**
     * Whether this side connected (sent the Hello).
     *
     * @return true for the active side
     */
    public boolean isActive() {
        return active;
    }

    /**
     * The peer's address.
     *
     * @return the address, or null before it is known
     */
    public InetSocketAddress remoteAddress() {
        lock.lock();
        try {
            return remote;
        } finally {
            unlock();
        }
    }

    /**
     * The local address.
     *
     * @return the address, or null before it is bound
     */
    public InetSocketAddress localAddress() {
        return cmId.localAddress();
    }

    /**
     * The flow-control scheme in use: the negotiated one once the handshake is done, before that the one
     * this side asks for.
     *
     * @return e.g. {@code "credit"}
     */
    public String flowControl() {
        return flowControlScheme().configName();
    }

    /**
     * The flow-control scheme in use (see {@link #flowControl()}).
     *
     * @return the negotiated scheme, or the wished one before the handshake
     */
    public FlowControlScheme flowControlScheme() {
        lock.lock();
        try {
            return schemeChosen ? fc.scheme() : wish;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The settings the connection was created with.
     *
     * @return a copy
     */
    public SdpOptions options() {
        return options.copy();
    }

    /**
     * Bytes of data available to read without waiting for the peer.
     *
     * @return the count
     */
    public long available() {
        lock.lock();
        try {
            progressLocked();
            return unreadBytes + (large == null || released ? 0 : large.remoteBytes() + large.writtenBytes());
        } finally {
            unlockAndNotify();
        }
    }

    /**
     * The connection's counters.
     *
     * @return a consistent copy
     */
    public ConnectionStats stats() {
        lock.lock();
        try {
            return statsLocked();
        } finally {
            unlock();
        }
    }

    private ConnectionStats statsLocked() {
        long stallNs = creditStallNs + (stalled ? System.nanoTime() - stallStartNs : 0);
        return new ConnectionStats(bytesSent, bytesReceived, messagesSent, messagesReceived, creditStalls, stallNs,
            large == null ? 0 : large.transfers(), large == null ? 0 : large.rdmaBytes(), rnrRetriesLocked(), fc.credits(),
            state, released);
    }

    /** The queue pair's RNR retries; kept at release, when the queue pair goes (issue 10). */
    private long rnrRetriesLocked() {
        if (!released) {
            rnrRetries = qp == null ? 0 : qp.rnrRetries();
        }
        return rnrRetries;
    }

    /**
     * Counters of one connection.
     *
     * @param bytesSent payload bytes posted
     * @param bytesReceived payload bytes received
     * @param messagesSent SDP messages posted, control messages included
     * @param messagesReceived SDP messages received
     * @param creditStalls stalls: times a write could take nothing because flow control allowed no message
     *     (credits ran out) — retries during one stall count once
     * @param creditStallNs time spent stalled, from the write that took nothing until flow control allowed a
     *     message again (a stall under way included)
     * @param zeroCopyTransfers zero-copy writes the peer read completely (SrcAvail, RDMA READ) or we
     *     RDMA-wrote into its advertised buffer (SinkAvail, RDMA WRITE; issue 9)
     * @param zeroCopyBytes bytes moved by RDMA READ or WRITE, as source and as sink (not in the other byte counts)
     * @param rnrRetries receiver-not-ready retries of the queue pair's sends ({@link QueuePair#rnrRetries()}), or
     *     {@link QueuePair#RNR_RETRIES_NOT_AVAILABLE} when the device does not count them
     * @param credits the peer's receive buffers this side may still use (flow control's credits)
     * @param state the state
     * @param released whether the resources are freed (the counters are final then)
     */
    public record ConnectionStats(long bytesSent, long bytesReceived, long messagesSent, long messagesReceived,
                                  long creditStalls, long creditStallNs, long zeroCopyTransfers, long zeroCopyBytes,
                                  long rnrRetries, int credits,
                                  State state, boolean released) {
    }

    /**
     * The connection's state in several lines: for FFDC records and diagnostics.
     *
     * @return the snapshot
     */
    public String snapshot() {
        lock.lock();
        try {
            return snapshotLocked();
        } finally {
            unlock();
        }
    }

    private String snapshotLocked() {
        StringBuilder b = new StringBuilder(512);
        b.append("connection ").append(connectionId).append(active ? " active" : " passive")
            .append(" device ").append(stack.device().name()).append('\n')
            .append("local ").append(cmId.localAddress()).append(" remote ").append(remote).append('\n')
            .append("state ").append(state).append(failure == null ? "" : " failure " + failure + ": " + failureDetail)
            .append(released ? " (released)" : "").append('\n')
            .append("flags appClosed=").append(appClosed).append(" inputShut=").append(inputShut)
            .append(" outputShut=").append(outputShut).append(" disconnSent=").append(disconnSent)
            .append(" disconnSendDone=").append(disconnSendDone).append(" disconnReceived=").append(disconnReceived).append('\n')
            .append("flow scheme=").append(schemeChosen ? fc.name() : "(asking for " + wish.configName() + ")").append(' ')
            .append(fc.describe()).append(" deviceOutstanding=").append(deviceOutstanding).append('\n')
            .append("mseq next=").append(nextMseq).append(" lastReceived=").append(lastRecvMseq).append('\n')
            .append("receive buffers=").append(recvCount).append('x').append(bufferBytes).append(" posted=").append(posted)
            .append(" unreadMessages=").append(unreadTail - unreadHead).append(" unreadBytes=").append(unreadBytes)
            .append(" brokenMarkers=").append(released ? "unknown (memory released)" : String.valueOf(brokenMarkersLocked()))
            .append('\n')
            .append("send slots=").append(sendCount).append(" goal=").append(goal).append(" posted=").append(slotPosted)
            .append(" completed=").append(slotCompleted).append(" open=").append(slotOpen).append('+').append(openBytes)
            .append(" control posted=").append(ctrlPosted).append(" completed=").append(ctrlCompleted).append('\n')
            .append(ring == null ? "" : "ring stream written=" + streamWritten + " posted=" + streamPosted + " announced="
                + streamAnnounced + " freed="
                + streamFreed + " notes posted=" + notePosted + " completed=" + noteCompleted
                + (deviceCount == 0 ? "" : " device messages posted=" + devicePosted + " outstanding=" + deviceOutstanding)
                + " peerRing=0x" + Long.toHexString(peerRingAddress) + "/0x" + Integer.toHexString(peerRingRkey)
                + " unread ring bytes queued before messages=" + ringQueued + '\n')
            .append(large == null ? "" : large.describe() + "\n")
            .append("queue pair ").append(qp == null ? "none" : qp.qpNumber() + " " + (released ? "destroyed" : qp.state()
                + deviceStateText()))
            .append('\n')
            .append("events pending=").append(eventPending).append(" armed=").append(cqArmed)
            .append(cqArmedSolicited ? " (solicited)" : "").append(" waiters=").append(waiters)
            .append(cq == null || released ? "" : " " + cq.describeDeviceState()).append('\n')
            .append("wake channel ").append(qp == null || released || qp.wakeChannel() == null ? "none" : "yes")
            .append(", waits on it ").append(directWaits).append('\n')
            .append("counters bytesSent=").append(bytesSent).append(" bytesReceived=").append(bytesReceived)
            .append(" messagesSent=").append(messagesSent).append(" messagesReceived=").append(messagesReceived)
            .append(" creditStalls=").append(creditStalls).append(" creditStallNs=").append(creditStallNs)
            .append(stalled ? " (stalled now)" : "").append(" zeroCopyTransfers=").append(large == null ? 0 : large.transfers())
            .append(" rnrRetries=").append(rnrText(rnrRetriesLocked())).append('\n')
            .append(spin.describe()).append('\n');
        return b.toString();
    }

    /** The device's view of the live queue pair, after a separator; empty when it tells nothing. */
    private String deviceStateText() {
        String d = qp.describeDeviceState();
        return d.isEmpty() ? "" : ": " + d;
    }

    /** An RNR count for text: the number, or {@code n/a} where the device does not count. */
    static String rnrText(long rnrRetries) {
        return rnrRetries == QueuePair.RNR_RETRIES_NOT_AVAILABLE ? "n/a" : Long.toString(rnrRetries);
    }

    @Override
    public String toString() {
        return "SdpConnection#" + connectionId + (active ? "(active)" : "(passive)");
    }
}
