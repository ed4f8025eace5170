package io.jsdp.testbed;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.SharedSegment;
import io.jsdp.testbed.shm.WaitWord;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A SoftRdma reliable-connected queue pair, modelled on NTRDMA's queues (seed 003): the send queue is
 * a ring with post / exec / done / reclaimed indices, the receive queue a ring with post / consume
 * indices, and executing a request moves its data straight into (or, for RDMA READ, out of) the
 * peer's registered memory.
 *
 * <h2>Who runs what</h2>
 * A request executes in the thread that posts it, in posting order. When it cannot finish now — the
 * peer has no receive posted (RNR), the peer does not answer (transport timeout), a fault delays it —
 * the send queue stalls and the device agent retries it later; a receive posted by the peer also
 * retries an RNR-stalled queue at once, from the peer's thread ("the NIC makes progress without the
 * application").
 *
 * <h2>Locks</h2>
 * {@code sqLock} guards the send queue. Receives are posted lock-free ({@link ReceiveRing}); {@code rqLock}
 * admits one consumer of the receive queue at a time and guards the responder side (the peer
 * executes its requests against our receive queue and memory under our {@code rqLock}). Order: a
 * thread holds at most one send lock and one receive lock, and takes the send lock first; no thread
 * holding a receive lock waits for a send lock. Completion queues take no lock. A responder that must
 * go to the error state flushes its receive queue at once and its send queue on the agent, so it
 * never takes its own send lock while the requester holds the requester's. Both locks are
 * {@link QpLock}s: a CAS and a release store.
 */
final class SoftQueuePair extends QpFields implements QueuePair, SoftDevice.SoftObject {
    static final TraceComponent TRACE = Trace.component("qp");
    private static final AtomicInteger NUMBERS = new AtomicInteger(1);

    /** Results of executing one request. */
    private static final int EXEC_DONE = 0;
    private static final int EXEC_RNR = 1;
    private static final int EXEC_NO_ACK = 2;
    private static final int EXEC_DEFERRED = 3;
    /** Across processes: the request must wait for answers to earlier messages (ordering, wire space). */
    private static final int EXEC_WAIT = 4;

    /** Why the send queue is stalled; read by the peer's receive path to decide whether to kick. */
    static final int STALL_NONE = 0;
    static final int STALL_RNR = 1;
    static final int STALL_NO_ACK = 2;
    static final int STALL_DELAY = 3;
    static final int STALL_FENCE = 4;
    static final int STALL_ANSWERS = 5;

    private final SoftDevice device;
    private final SoftProtectionDomain pd;
    private final SoftCompletionQueue sendCq;
    private final SoftCompletionQueue recvCq;
    private final QueuePairAttributes attributes;
    private final int qpNumber;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final int maxSendSge;
    private final int maxRecvSge;
    private final int maxInline;
    private final boolean signalAll;
    private final Tracked tracked;
    private final Runnable retryTask = this::onRetryTimer;

    /** Written under the lock of the side that changes it; ERROR is sticky until RESET. */
    private volatile QpState state = QpState.INIT;
    /** The connected peer; set by the connection manager before the state becomes RTS. */
    private volatile SoftQueuePair peer;
    private volatile boolean destroyed;
    /** Requester retry limits, set with the peer. */
    private volatile int retryCount;
    private volatile int rnrRetryCount;

    // ---- send queue: guarded by sqLock; its counters live in QpSendState, on their own cache lines ----
    private final QpLock sqLock = new QpLock();
    private final SendWqe[] sq;
    private final int sqMask;
    /**
     * Written under sqLock: by our progress, and by the peer's responder (in our thread, which holds our
     * sqLock) when it answers RNR. Read without a lock by the peer's postRecv (see {@link ReceiveRing}
     * for the handshake that makes the RNR mark and a new receive always see each other).
     */
    private final Stall stall = new Stall();

    // ---- receive queue: lock-free between posters and the consumer (ReceiveRing) ----
    // rqLock: the one consumer at a time (the peer's requester executing against us, or our own flush)
    // and the responder's state changes.
    private final QpLock rqLock = new QpLock();
    private final ReceiveRing ring;
    /** Messages on a wire our responder marked RNR; guarded by rqLock. */
    private long rnrMarks;
    /**
     * Why the message being answered puts our responder in ERROR, set by respondXp and acted on by
     * drainLocked once the answer is written; guarded by rqLock.
     */
    private String failAfterAnswer;

    // ---- across processes: the connection to a queue pair of another process, or null ----
    private volatile XpLink link;
    /** Our outbound wire, made by openWire before the connection exists; guarded by sqLock. */
    private SharedSegment pendingTx;
    private Wire pendingWire;

    SoftQueuePair(SoftDevice device, SoftProtectionDomain pd, QueuePairAttributes a) throws VerbsException {
        if (!(a.sendCq() instanceof SoftCompletionQueue) || !(a.recvCq() instanceof SoftCompletionQueue)) {
            throw new VerbsException(Errno.EINVAL, "queue pair needs send and receive completion queues of this device");
        }
        SoftCompletionQueue scq = (SoftCompletionQueue) a.sendCq();
        SoftCompletionQueue rcq = (SoftCompletionQueue) a.recvCq();
        if (scq.device() != device || rcq.device() != device || pd.softDevice() != device) {
            throw new VerbsException(Errno.EINVAL, "queue pair objects must belong to device " + device.name());
        }
        int maxWr = device.capabilities().maxQpWr();
        int maxSge = device.capabilities().maxSge();
        if (a.maxSendWr() < 1 || a.maxSendWr() > maxWr || a.maxRecvWr() < 1 || a.maxRecvWr() > maxWr
            || a.maxSendSge() < 1 || a.maxSendSge() > maxSge || a.maxRecvSge() < 1 || a.maxRecvSge() > maxSge
            || a.maxInlineData() < 0 || a.maxInlineData() > device.capabilities().maxInlineData()
            || a.ackTimeoutNs() <= 0 || a.minRnrTimerNs() <= 0) {
            throw new VerbsException(Errno.EINVAL, "queue pair attributes outside the device's capabilities "
                + device.capabilities());
        }
        this.device = device;
        this.pd = pd;
        this.sendCq = scq;
        this.recvCq = rcq;
        this.attributes = a.copy();
        this.qpNumber = NUMBERS.getAndIncrement();
        this.maxSendWr = a.maxSendWr();
        this.maxRecvWr = a.maxRecvWr();
        this.maxSendSge = a.maxSendSge();
        this.maxRecvSge = a.maxRecvSge();
        this.maxInline = a.maxInlineData();
        this.signalAll = a.signalAll();
        int sqSize = ringSize(maxSendWr);
        this.sq = new SendWqe[sqSize];
        this.sqMask = sqSize - 1;
        for (int i = 0; i < sqSize; i++) {
            sq[i] = new SendWqe(maxSendSge, maxInline);
        }
        this.ring = new ReceiveRing(maxRecvWr, maxRecvSge);
        pd.users.incrementAndGet();
        scq.users.add(this);
        rcq.users.add(this);
        this.tracked = device.resources().track(this, "QP", "QP " + qpNumber + " on " + device.name());
        device.register(this);
        if (TRACE.on(TraceLevel.ENTRY_EXIT)) {
            TRACE.record(TraceLevel.ENTRY_EXIT, "qp.create", qpNumber, maxSendWr, maxRecvWr);
        }
    }

    private static int ringSize(int n) {
        return Integer.highestOneBit(Math.max(1, n - 1)) << 1;
    }

    // ------------------------------------------------------------------ port API

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public QpState state() {
        return state;
    }

    /**
     * {@link #rnrNaks()}: within one JVM every retry that again finds no receive counts; across processes
     * the responder holds the message until a receive comes, and each message counts once when the
     * requester's timer ({@link XpEngine#CHECK_NS}, 1 ms) finds it so held — a shorter wait goes uncounted.
     */
    @Override
    public long rnrRetries() {
        return rnrNaks();
    }

    @Override
    public QueuePairAttributes attributes() {
        return attributes.copy();
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public int postSend(SendWorkRequest r) {
        Opcode op = r.opcode();
        if (op == Opcode.ATOMIC_CMP_AND_SWP || op == Opcode.ATOMIC_FETCH_AND_ADD) {
            return Errno.EINVAL;
        }
        int n = r.numSge();
        if (n > maxSendSge || (r.flags() & ~SendFlags.ALL) != 0) {
            return Errno.EINVAL;
        }
        boolean inline = (r.flags() & SendFlags.INLINE) != 0;
        long total = r.totalLength();
        if (inline && (op == Opcode.RDMA_READ || total > maxInline)) {
            return Errno.EINVAL;
        }
        if (total > Integer.MAX_VALUE) {
            return Errno.EINVAL;
        }
        sqLock.lock();
        try {
            QpState s = state;
            if (s != QpState.RTS && s != QpState.ERROR) {
                return Errno.EINVAL;
            }
            if (destroyed) {
                return Errno.EINVAL;
            }
            if (sqPost - sqReclaimed >= maxSendWr) {
                XpLink l = link;
                if (l == null || !processAnswersLocked(l) || sqPost - sqReclaimed >= maxSendWr) {
                    return Errno.ENOMEM;
                }
            }
            SendWqe w = sq[(int) sqPost & sqMask];
            w.load(r, sqPost, signalAll, pd, device.memoryRegions);
            long delayNs = device.faults().operationDelayNs();
            if (delayNs > 0) {
                w.notBeforeNs = System.nanoTime() + delayNs;
            }
            sqPost++;
            if (TRACE.on(TraceLevel.HOT_ENTRY_EXIT)) {
                TRACE.record(TraceLevel.HOT_ENTRY_EXIT, "qp.postSend", qpNumber, w.wrId, op.code(), w.total);
            }
            if (s == QpState.ERROR) {
                enterErrorLocked();
            } else {
                progressLocked();
            }
        } finally {
            sqLock.unlock();
        }
        device.faults().afterPost();
        return Errno.OK;
    }

    @Override
    public int postRecv(ReceiveWorkRequest r) {
        if (r.numSge() > maxRecvSge) {
            return Errno.EINVAL;
        }
        QpState s = state;
        if (s == QpState.RESET || destroyed) {
            return Errno.EINVAL;
        }
        long position = ring.claim();
        if (position < 0) {
            return Errno.ENOMEM;
        }
        ring.slot(position).load(r, pd, device.memoryRegions);
        ring.publish(position);
        if (TRACE.on(TraceLevel.HOT_ENTRY_EXIT)) {
            TRACE.record(TraceLevel.HOT_ENTRY_EXIT, "qp.postRecv", qpNumber, r.wrId());
        }
        if (state == QpState.ERROR) {
            // posted in (or racing with a move to) ERROR: flushed at once
            rqLock.lock();
            try {
                flushRecvLocked();
            } finally {
                rqLock.unlock();
            }
            return Errno.OK;
        }
        XpLink l = link;
        if (l != null) {
            // A message of the peer that found no receive is delivered now, in this thread. The mark is
            // read after the volatile publication; the responder marks, then looks at the ring again.
            if (l.rnrMarked == l.rxHead) {
                rqLock.lock();
                try {
                    if (link == l) {
                        drainLocked(l);
                    }
                } finally {
                    rqLock.unlock();
                }
            }
            return Errno.OK;
        }
        // A requester stalled for lack of a receive retries now, in this thread. The stall is read after
        // the volatile publication (ReceiveRing: the RNR-kick handshake).
        SoftQueuePair p = peer;
        if (p != null && p.stall.get() == STALL_RNR) {
            p.kick();
        }
        return Errno.OK;
    }

    @Override
    public void modify(QpState target) throws VerbsException {
        switch (target) {
            case ERROR:
                enterError("modify");
                return;
            case RESET:
                sqLock.lock();
                try {
                    rqLock.lock();
                    try {
                        sqExec = sqPost;
                        sqDone = sqPost;
                        sqReclaimed = sqPost;
                        readsInFlight = 0;
                        while (ring.peek() != null) {
                            ring.advance(); // discarded: RESET completes nothing
                        }
                        peer = null;
                        stall.set(STALL_NONE);
                        transition(QpState.RESET, "modify");
                        unlinkLocked();
                    } finally {
                        rqLock.unlock();
                    }
                } finally {
                    sqLock.unlock();
                }
                return;
            case INIT:
                sqLock.lock();
                try {
                    if (state != QpState.RESET) {
                        throw new VerbsException(Errno.EINVAL, "INIT only from RESET; " + this + " is " + state);
                    }
                    transition(QpState.INIT, "modify");
                } finally {
                    sqLock.unlock();
                }
                return;
            default:
                throw new VerbsException(Errno.EINVAL, "the connection manager moves queue pairs to " + target);
        }
    }

    @Override
    public void close() {
        forceClose();
    }

    /** Whether the queue pair was destroyed ({@link #close()}). */
    boolean isDestroyed() {
        return destroyed;
    }

    @Override
    public void forceClose() {
        sqLock.lock();
        try {
            rqLock.lock();
            try {
                if (destroyed) {
                    return;
                }
                destroyed = true;
                peer = null;
                stall.set(STALL_NONE);
                unlinkLocked();
            } finally {
                rqLock.unlock();
            }
        } finally {
            sqLock.unlock();
        }
        sendCq.users.remove(this);
        recvCq.users.remove(this);
        pd.users.decrementAndGet();
        device.unregister(this);
        tracked.release();
        if (TRACE.on(TraceLevel.ENTRY_EXIT)) {
            TRACE.record(TraceLevel.ENTRY_EXIT, "qp.destroy", qpNumber);
        }
    }

    // ------------------------------------------------------------------ connection manager

    /** Connects to {@code remote} and moves INIT → RTR → RTS; called by the connection manager. */
    void connect(SoftQueuePair remote, ConnectionParameters p) throws VerbsException {
        sqLock.lock();
        try {
            if (state != QpState.INIT || destroyed) {
                throw new VerbsException(Errno.EINVAL, this + " must be in INIT to connect, is " + state);
            }
            this.retryCount = p.retryCount();
            this.rnrRetryCount = p.rnrRetryCount();
            this.peer = remote;
            transition(QpState.RTR, "connect");
            transition(QpState.RTS, "connect");
        } finally {
            sqLock.unlock();
        }
    }

    /**
     * Creates this queue pair's outbound wire, if not yet, and says where it is: what the connection
     * manager sends the peer process (host-fabric devices only).
     *
     * @return this end of the connection
     * @throws VerbsException when the device is not on the host fabric or the segment cannot be made
     */
    XpEndpoint openWire() throws VerbsException {
        sqLock.lock();
        try {
            return openWireLocked();
        } finally {
            sqLock.unlock();
        }
    }

    private XpEndpoint openWireLocked() throws VerbsException {
        XpEngine engine = device.xp();
        if (engine == null) {
            throw new VerbsException(Errno.EOPNOTSUPP, device.name() + " is not on the host fabric: it cannot reach "
                + "other processes");
        }
        if (destroyed) {
            throw new VerbsException(Errno.EINVAL, this + " is destroyed");
        }
        XpLink l = link;
        SharedSegment seg = l != null ? l.txSegment : pendingTx;
        if (seg == null) {
            int slots = sq.length;
            try {
                seg = engine.node().createSegment(Wire.bytes(slots, XpEngine.wireBytes()));
            } catch (IOException e) {
                throw new VerbsException(Errno.ENOMEM, "cannot create the wire of " + this + ": " + e);
            }
            pendingWire = Wire.create(seg.buffer(), slots, XpEngine.wireBytes());
            pendingTx = seg;
        }
        return new XpEndpoint(qpNumber, pd.number(), XpEngine.numberOf(seg), engine.segmentNumber(),
            attributes.minRnrTimerNs());
    }

    /**
     * Connects to a queue pair of another process (maps its wire and its device's table) and moves
     * INIT → RTR → RTS; called by the connection manager.
     *
     * @param node the peer's process
     * @param remote what the peer sent
     * @param p the retry counts
     * @throws VerbsException when this queue pair is not in INIT or the peer's segments cannot be mapped
     */
    void connectRemote(NodeId node, XpEndpoint remote, ConnectionParameters p) throws VerbsException {
        XpEngine engine = device.xp();
        sqLock.lock();
        try {
            if (state != QpState.INIT || destroyed) {
                throw new VerbsException(Errno.EINVAL, this + " must be in INIT to connect, is " + state);
            }
            openWireLocked();
            Wire rx;
            KeyTable keys;
            WaitWord bell;
            try {
                rx = Wire.attach(engine.peerSegment(node, remote.wireSegment()).buffer());
                SharedSegment ds = engine.peerSegment(node, remote.deviceSegment());
                if (ds.buffer().capacity() < KeyTable.SEGMENT_BYTES) {
                    throw new VerbsException(Errno.EINVAL, "peer device segment of " + ds.buffer().capacity()
                        + " bytes is malformed");
                }
                keys = new KeyTable(ds.buffer());
                bell = engine.peerDoorbell(node, remote.deviceSegment());
            } catch (IOException e) {
                throw new VerbsException(Errno.ENOENT, "cannot map the segments of peer QP " + remote.qpNumber() + " of "
                    + node + ": " + e);
            }
            if (remote.minRnrTimerNs() <= 0) {
                throw new VerbsException(Errno.EINVAL, "peer sent a minimum RNR timer of " + remote.minRnrTimerNs());
            }
            XpLink l = new XpLink(node, pendingTx, pendingWire, rx, engine.node().segmentName(node, remote.wireSegment()),
                keys, bell, remote, inProcessPeer(engine, node, remote));
            pendingTx = null;
            pendingWire = null;
            // Until the progress thread has seen pollers at work, ask the peer for doorbells.
            l.seenSendPolls = sendCq.polls();
            l.seenRecvPolls = recvCq.polls();
            l.wantsAnswers = true;
            l.wantsMessages = true;
            l.tx.requesterWantsDoorbell(true);
            l.rx.responderWantsDoorbell(true);
            this.retryCount = p.retryCount();
            this.rnrRetryCount = p.rnrRetryCount();
            l.direct.queuePair(this);
            this.link = l;
            sendCq.addXp(this);
            recvCq.addXp(this);
            transition(QpState.RTR, "connect");
            transition(QpState.RTS, "connect");
            engine.add(this, l);
            if (TRACE.on(TraceLevel.ENTRY_EXIT)) {
                TRACE.record(TraceLevel.ENTRY_EXIT, "qp.connectRemote", qpNumber, remote.qpNumber(), node.pid());
            }
        } finally {
            sqLock.unlock();
        }
    }

    /**
     * Active side, once connected: opens the direct doorbell to the peer's queue pair (which linked
     * before it answered). Not under a lock: a Unix-domain connect.
     */
    void openDirect() {
        XpLink l = link;
        if (l != null && XpEngine.DIRECT_DOORBELL && l.localPeer == null) {
            l.direct.opened(device.xp().node().openDirect(l.peerNode, l.peerQpNumber, qpNumber));
        }
    }

    /**
     * Passive side, on the node thread: the peer opened our direct doorbell.
     *
     * @return true when taken (the link's peer is the one that opened it)
     */
    boolean takeDirect(NodeId peer, int sourceQp, java.nio.channels.SocketChannel ch) {
        XpLink l = link;
        return l != null && XpEngine.DIRECT_DOORBELL && l.peerNode.equals(peer) && l.peerQpNumber == sourceQp
            && l.direct.taken(ch);
    }

    @Override
    public io.jsdp.verbs.WakeChannel wakeChannel() {
        XpLink l = link;
        return l != null && XpEngine.DIRECT_DOORBELL && l.localPeer == null ? l.direct : null;
    }

    /**
     * The peer's device when it is in this process and neither end is {@link SoftDevice.Fabric#HOST_ONLY}
     * (which behaves as if across processes, for tests), else null.
     */
    private SoftDevice inProcessPeer(XpEngine engine, NodeId node, XpEndpoint remote) {
        if (device.fabricChoice() == SoftDevice.Fabric.HOST_ONLY) {
            return null;
        }
        SoftDevice d = engine.inProcessPeer(node, remote.deviceSegment());
        return d == null || d.fabricChoice() == SoftDevice.Fabric.HOST_ONLY ? null : d;
    }

    /**
     * The peer's process is gone: the oldest outstanding request fails as after a transport timeout
     * ({@code RETRY_EXC_ERR}), the rest are flushed, and the queue pair goes to ERROR.
     */
    void peerLost() {
        sqLock.lock();
        try {
            XpLink l = link;
            if (l != null && state != QpState.ERROR) {
                for (long i = sqDone; i < sqPost; i++) {
                    SendWqe w = sq[(int) i & sqMask];
                    if (w.state != SendWqe.DONE) {
                        w.complete(WcStatus.RETRY_EXC_ERR);
                        traceRequesterError(w);
                        break;
                    }
                }
            }
            if (TRACE.on(TraceLevel.RARE) && state != QpState.ERROR) {
                TRACE.record(TraceLevel.RARE, "qp.toError.peer_lost", qpNumber);
            }
            enterErrorLocked();
        } finally {
            sqLock.unlock();
        }
    }

    /** Moves to ERROR, completing everything outstanding with a flush. */
    void enterError(String why) {
        sqLock.lock();
        try {
            if (TRACE.on(TraceLevel.RARE) && state != QpState.ERROR) {
                TRACE.record(TraceLevel.RARE, "qp.toError." + why.replace(' ', '_'), qpNumber);
            }
            enterErrorLocked();
        } finally {
            sqLock.unlock();
        }
    }

    SoftDevice softDevice() {
        return device;
    }

    // ------------------------------------------------------------------ requester

    /** Runs the send queue from the retry timer. */
    private void onRetryTimer() {
        sqLock.lock();
        try {
            retryScheduled = false;
            if (!destroyed) {
                progressLocked();
            }
        } finally {
            sqLock.unlock();
        }
    }

    /** Runs the send queue from the peer's receive path. */
    private void kick() {
        sqLock.lock();
        try {
            if (!destroyed) {
                progressLocked();
            }
        } finally {
            sqLock.unlock();
        }
    }

    private void scheduleRetryLocked(long delayNs) {
        if (!retryScheduled) {
            retryScheduled = true;
            device.schedule(retryTask, delayNs);
        }
    }

    /** Executes posted requests in order until one cannot finish now, then emits completions. */
    private void progressLocked() {
        while (sqExec < sqPost) {
            if (state == QpState.ERROR) {
                enterErrorLocked();
                return;
            }
            SendWqe w = sq[(int) sqExec & sqMask];
            if (w.notBeforeNs != 0) {
                long waitNs = w.notBeforeNs - System.nanoTime();
                if (waitNs > 0) {
                    stall.set(STALL_DELAY);
                    scheduleRetryLocked(waitNs);
                    break;
                }
                w.notBeforeNs = 0;
            }
            if ((w.flags & SendFlags.FENCE) != 0 && readsInFlight > 0) {
                stall.set(STALL_FENCE);
                break;
            }
            if (w.awaitingAck) {
                if (retryScheduled) {
                    break; // its ACK timeout is running: it is retried when the timeout expires, not before
                }
                // The timeout expired unanswered: retry, unless that was the last of retry_cnt retries
                // (reference B.2 "Transport retry", rxe COMPST_ERROR_RETRY: n retries, the error at
                // (n + 1) x timeout; a retry only when a timeout expires, never early).
                w.awaitingAck = false;
                if (++w.ackTimeouts > retryCount) {
                    w.complete(WcStatus.RETRY_EXC_ERR);
                    sqExec++;
                    traceRequesterError(w);
                    enterErrorLocked();
                    return;
                }
                transportRetries++;
            }
            int r = execute(w);
            if (r == EXEC_DONE) {
                sqExec++;
                if (w.status != WcStatus.SUCCESS) {
                    traceRequesterError(w);
                    enterErrorLocked();
                    return;
                }
                continue;
            }
            if (r == EXEC_DEFERRED) {
                sqExec++;
                continue;
            }
            if (r == EXEC_WAIT) {
                stall.set(STALL_ANSWERS); // answers to earlier messages run the queue again (processAnswersLocked)
                break;
            }
            if (r == EXEC_RNR) {
                stall.set(STALL_RNR);
                rnrNaks++;
                if (retryScheduled) {
                    break;
                }
                int limit = rnrRetryCount;
                if (limit != ConnectionParameters.RNR_RETRY_INFINITE && w.rnrNaks >= limit) {
                    w.complete(WcStatus.RNR_RETRY_EXC_ERR);
                    sqExec++;
                    traceRequesterError(w);
                    enterErrorLocked();
                    return;
                }
                w.rnrNaks++;
                SoftQueuePair p = peer;
                scheduleRetryLocked(p != null ? p.attributes.minRnrTimerNs() : attributes.minRnrTimerNs());
                break;
            }
            // EXEC_NO_ACK: the peer did not answer; wait out the ACK timeout (above: retry or fail then).
            // A timer already pending (another stall's) runs the request again first.
            stall.set(STALL_NO_ACK);
            if (!retryScheduled) {
                w.awaitingAck = true;
                scheduleRetryLocked(attributes.ackTimeoutNs());
            }
            break;
        }
        if (sqExec == sqPost && readsInFlight == 0) {
            stall.set(STALL_NONE);
        }
        emitCompletionsLocked();
    }

    private int execute(SendWqe w) {
        if (w.localError || w.localRegionGone()) {
            w.complete(WcStatus.LOC_PROT_ERR);
            return EXEC_DONE;
        }
        XpLink l = link;
        if (l != null) {
            return executeXp(w, l);
        }
        SoftQueuePair p = peer;
        if (!reachable(p)) {
            return EXEC_NO_ACK;
        }
        switch (w.opcode) {
            case SEND:
            case SEND_WITH_IMM:
                return p.respondSend(this, w);
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
                return p.respondWrite(this, w);
            case RDMA_READ:
                long delayNs = device.faults().readDelayNs();
                if (delayNs > 0) {
                    w.state = SendWqe.IN_FLIGHT;
                    readsInFlight++;
                    long seq = w.seq;
                    device.schedule(() -> finishDeferredRead(seq), delayNs);
                    return EXEC_DEFERRED;
                }
                return p.respondRead(w);
            default:
                w.complete(WcStatus.LOC_QP_OP_ERR);
                return EXEC_DONE;
        }
    }

    /** Moves a delayed RDMA READ's data now, then lets fenced requests go on. */
    private void finishDeferredRead(long seq) {
        sqLock.lock();
        try {
            if (destroyed || seq < sqDone || seq >= sqExec) {
                return;
            }
            SendWqe w = sq[(int) seq & sqMask];
            if (w.seq != seq || w.state != SendWqe.IN_FLIGHT) {
                return;
            }
            readsInFlight--;
            SoftQueuePair p = peer;
            int r;
            if (w.localRegionGone()) {
                // The sink was deregistered while the READ was out: its data must not land there
                // (rxe re-validates the MR when the response arrives, rxe_recheck_mr).
                w.complete(WcStatus.LOC_PROT_ERR);
                r = EXEC_DONE;
            } else {
                XpLink l = link;
                r = l != null ? xpOneSided(w, l) : reachable(p) ? p.respondRead(w) : EXEC_NO_ACK;
            }
            if (r != EXEC_DONE) {
                w.complete(WcStatus.RETRY_EXC_ERR);
            }
            if (w.status != WcStatus.SUCCESS) {
                traceRequesterError(w);
                enterErrorLocked();
                return;
            }
            progressLocked();
        } finally {
            sqLock.unlock();
        }
    }

    private boolean reachable(SoftQueuePair p) {
        return p != null && !p.destroyed && !device.faults().isLinkDown() && !p.device.faults().isLinkDown();
    }

    /** Completes finished requests in posting order; signaled and failed ones produce entries. */
    private void emitCompletionsLocked() {
        while (sqDone < sqExec) {
            SendWqe w = sq[(int) sqDone & sqMask];
            if (w.state != SendWqe.DONE) {
                break;
            }
            if (w.signaled || w.status != WcStatus.SUCCESS) {
                boolean ok = w.status == WcStatus.SUCCESS;
                sendCq.push(w.wrId, w.status, WcOpcode.of(w.opcode), ok ? (int) w.total : 0, 0, 0, qpNumber, false);
                // Hardware reclaims the slots of unsignaled requests only when a later one completes.
                sqReclaimed = sqDone + 1;
            }
            sqDone++;
        }
    }

    /** Error state: the failed request (already DONE) and everything after it complete, in order. */
    private void enterErrorLocked() {
        if (state != QpState.ERROR) {
            transition(QpState.ERROR, "error");
        }
        stall.set(STALL_NONE);
        for (long i = sqDone; i < sqPost; i++) {
            SendWqe w = sq[(int) i & sqMask];
            if (w.state != SendWqe.DONE) {
                w.complete(WcStatus.WR_FLUSH_ERR);
            }
        }
        sqExec = sqPost;
        readsInFlight = 0;
        XpLink l = link;
        if (l != null) {
            withdrawAllLocked(l);
        }
        emitCompletionsLocked();
        sqReclaimed = sqDone;
        rqLock.lock();
        try {
            flushRecvLocked();
        } finally {
            rqLock.unlock();
        }
    }

    private void traceRequesterError(SendWqe w) {
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, "qp.requesterError", qpNumber, w.wrId, w.status.code(), w.opcode.code());
        }
    }

    // ------------------------------------------------------------------ responder (runs in the requester's thread)

    private int respondSend(SoftQueuePair requester, SendWqe w) {
        rqLock.lock();
        try {
            if (!readyToRespond()) {
                return EXEC_NO_ACK;
            }
            RecvWqe r = ring.peek();
            if (r == null && (r = rnrLocked(requester)) == null) {
                return EXEC_RNR;
            }
            long wrId = r.wrId;
            if (!r.usable()) {
                ring.advance();
                recvCq.push(wrId, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, 0, 0, qpNumber, true);
                responderErrorLocked("bad receive");
                w.complete(WcStatus.REM_OP_ERR);
                return EXEC_DONE;
            }
            if (w.total > r.capacity) {
                ring.advance();
                recvCq.push(wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, 0, 0, qpNumber, true);
                responderErrorLocked("receive too small");
                w.complete(WcStatus.REM_INV_REQ_ERR);
                return EXEC_DONE;
            }
            r.scatterFrom(w);
            ring.advance();
            boolean imm = w.opcode == Opcode.SEND_WITH_IMM;
            recvCq.push(wrId, WcStatus.SUCCESS, WcOpcode.RECV, (int) w.total, imm ? w.immData : 0,
                imm ? WorkCompletion.WITH_IMM : 0, qpNumber, (w.flags & SendFlags.SOLICITED) != 0);
            w.complete(WcStatus.SUCCESS);
            return EXEC_DONE;
        } finally {
            rqLock.unlock();
        }
    }

    private int respondWrite(SoftQueuePair requester, SendWqe w) {
        rqLock.lock();
        try {
            if (!readyToRespond()) {
                return EXEC_NO_ACK;
            }
            boolean withImm = w.opcode == Opcode.RDMA_WRITE_WITH_IMM;
            RecvWqe r = null;
            if (withImm && (r = ring.peek()) == null && (r = rnrLocked(requester)) == null) {
                return EXEC_RNR;
            }
            // A zero-length RDMA operation needs no key (IBA C9-88; SDP keepalives rely on it).
            if (w.total > 0) {
                SoftMemoryRegion m = remoteRegion(w, Access.REMOTE_WRITE);
                if (m == null) {
                    responderErrorLocked("remote access");
                    w.complete(WcStatus.REM_ACCESS_ERR);
                    return EXEC_DONE;
                }
                w.remoteBuf[0] = m.buffer();
                w.remoteOff[0] = m.offsetOf(w.remoteAddress);
                w.remoteLen[0] = (int) w.total;
                ScatterGather.copy(w.buf, w.off, w.len, w.count, w.remoteBuf, w.remoteOff, w.remoteLen, 1);
                w.remoteBuf[0] = null;
            }
            if (r != null) {
                long wrId = r.wrId;
                ring.advance();
                recvCq.push(wrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, (int) w.total, w.immData,
                    WorkCompletion.WITH_IMM, qpNumber, (w.flags & SendFlags.SOLICITED) != 0);
            }
            w.complete(WcStatus.SUCCESS);
            return EXEC_DONE;
        } finally {
            rqLock.unlock();
        }
    }

    private int respondRead(SendWqe w) {
        rqLock.lock();
        try {
            if (!readyToRespond()) {
                return EXEC_NO_ACK;
            }
            if (w.total > 0) {
                SoftMemoryRegion m = remoteRegion(w, Access.REMOTE_READ);
                if (m == null) {
                    responderErrorLocked("remote access");
                    w.complete(WcStatus.REM_ACCESS_ERR);
                    return EXEC_DONE;
                }
                w.remoteBuf[0] = m.buffer();
                w.remoteOff[0] = m.offsetOf(w.remoteAddress);
                w.remoteLen[0] = (int) w.total;
                ScatterGather.copy(w.remoteBuf, w.remoteOff, w.remoteLen, 1, w.buf, w.off, w.len, w.count);
                w.remoteBuf[0] = null;
            }
            w.complete(WcStatus.SUCCESS);
            return EXEC_DONE;
        } finally {
            rqLock.unlock();
        }
    }

    /**
     * No receive for the requester's message: RNR. The requester's stall is marked here, before we
     * return, with a fenced store, and the ring is read once more: a receive posted after our first look
     * either is found now or its poster sees the mark and kicks. (Marked later, a receive posted in
     * between found no stall, did not kick, and the send waited out a whole RNR timer.) The requester's
     * thread holds the requester's sqLock, which guards the field.
     *
     * @return a receive that arrived meanwhile, or null for RNR
     */
    private RecvWqe rnrLocked(SoftQueuePair requester) {
        requester.stall.setFenced(STALL_RNR);
        // Look again after the fenced mark: a receive published before it is found here; one published
        // after it sees the mark and kicks (ReceiveRing, the RNR-kick handshake).
        return ring.peek();
    }

    /** The region an RDMA request may touch, checked as rxe's check_rkey does; null when refused. */
    private SoftMemoryRegion remoteRegion(SendWqe w, int needed) {
        SoftMemoryRegion m = device.memoryRegions.byKey(w.rkey);
        if (m == null || m.isClosed() || m.pd() != pd || (m.access() & needed) == 0
            || !m.contains(w.remoteAddress, w.total)) {
            return null;
        }
        return m;
    }

    private boolean readyToRespond() {
        QpState s = state;
        return (s == QpState.RTR || s == QpState.RTS) && !destroyed;
    }

    /**
     * The responder broke (remote access or length error, bad receive): ERROR now, receive queue flushed
     * now (this thread holds rqLock), send queue flushed on the agent (lock order).
     */
    private void responderErrorLocked(String why) {
        if (state != QpState.ERROR) {
            transition(QpState.ERROR, why);
        }
        flushRecvLocked();
        device.schedule(() -> enterError(why), 0);
    }

    private void flushRecvLocked() {
        RecvWqe r;
        while ((r = ring.peek()) != null) {
            long wrId = r.wrId;
            ring.advance();
            recvCq.push(wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0, qpNumber, false);
        }
    }

    // ------------------------------------------------------------------ across processes: requester

    /**
     * Executes a request towards a queue pair of another process. Messages (SEND, the immediate of
     * RDMA_WRITE_WITH_IMM) go into our wire and complete when answered; RDMA WRITE and READ copy
     * into or out of the peer's device memory here, once every earlier message is answered (the
     * responder executes in order).
     */
    private int executeXp(SendWqe w, XpLink l) {
        if (device.faults().isLinkDown()) {
            return EXEC_NO_ACK;
        }
        switch (w.opcode) {
            case SEND:
            case SEND_WITH_IMM:
                return publishXp(w, l, w.opcode.code(), (int) w.total, true);
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
            case RDMA_READ:
                if (l.txSeq != l.txAcked) {
                    return EXEC_WAIT;
                }
                if (l.tx.responderSilent()) {
                    return EXEC_NO_ACK;
                }
                if (w.opcode == Opcode.RDMA_READ) {
                    long delayNs = device.faults().readDelayNs();
                    if (delayNs > 0) {
                        w.state = SendWqe.IN_FLIGHT;
                        readsInFlight++;
                        long seq = w.seq;
                        device.schedule(() -> finishDeferredRead(seq), delayNs);
                        return EXEC_DEFERRED;
                    }
                }
                int r = xpOneSided(w, l);
                if (r == EXEC_DONE && w.status == WcStatus.SUCCESS && w.opcode == Opcode.RDMA_WRITE_WITH_IMM) {
                    w.state = SendWqe.POSTED;
                    w.status = null;
                    return publishXp(w, l, w.opcode.code(), (int) w.total, false);
                }
                return r;
            default:
                w.complete(WcStatus.LOC_QP_OP_ERR);
                return EXEC_DONE;
        }
    }

    /**
     * Copies an RDMA WRITE's or READ's data into or out of the peer's memory, after checking the rkey
     * in the peer's key table as the responder would (rxe check_rkey): published, same protection
     * domain as the peer's queue pair, the access, the bounds. In another process remote memory must
     * be device memory; in this process (the peer's device found by its segment) any region is
     * reachable, checked in the peer's region table. A refusal is a remote access error, and the peer is
     * told to go to ERROR as a responder that refused the request would.
     */
    private int xpOneSided(SendWqe w, XpLink l) {
        if (w.total == 0) {
            w.complete(WcStatus.SUCCESS); // a zero-length RDMA operation needs no key (IBA C9-88)
            return EXEC_DONE;
        }
        int needed = w.opcode == Opcode.RDMA_READ ? Access.REMOTE_READ : Access.REMOTE_WRITE;
        KeyTable.Entry e = l.scratch;
        ByteBuffer remote = null;
        int at = 0;
        String refused = null;
        SoftDevice local = l.localPeer;
        if (local != null) {
            // The peer is in this process: its region table is the authority, and any region is reachable.
            SoftMemoryRegion m = local.memoryRegions.byKey(w.rkey);
            if (m == null || m.isClosed()) {
                refused = "no such rkey";
            } else if (m.pd().number() != l.peerPd) {
                refused = "rkey of another protection domain";
            } else if ((m.access() & needed) == 0) {
                refused = "rkey without " + Access.toString(needed);
            } else if (!m.contains(w.remoteAddress, w.total)) {
                refused = "outside the region";
            } else {
                remote = m.buffer();
                at = m.offsetOf(w.remoteAddress);
            }
        } else if (!l.peerKeys.lookup(w.rkey, e)) {
            refused = "no such rkey";
        } else if (e.pd != l.peerPd) {
            refused = "rkey of another protection domain";
        } else if ((e.access & needed) == 0) {
            refused = "rkey without " + Access.toString(needed);
        } else {
            long offset = w.remoteAddress - MemoryRegionTable.addressOf(w.rkey);
            if (offset < 0 || offset + w.total > e.length) {
                refused = "outside the region";
            } else if (e.segment == 0) {
                refused = "the region is not device memory, which is all another process can reach";
            } else {
                if (e.segment == l.lastSegment) {
                    remote = l.lastSegmentBuffer;
                } else {
                    try {
                        remote = device.xp().peerSegment(l.peerNode, e.segment).buffer();
                        l.lastSegment = e.segment;
                        l.lastSegmentBuffer = remote;
                    } catch (IOException ex) {
                        refused = "its device memory is gone (" + ex.getMessage() + ")";
                    }
                }
                if (remote != null) {
                    long end = (long) e.segmentOffset + offset + w.total;
                    if (e.segmentOffset < 0 || end > remote.capacity()) {
                        refused = "the peer's key table names bytes outside its segment";
                        remote = null;
                    } else {
                        at = (int) (e.segmentOffset + offset);
                    }
                }
            }
        }
        if (remote == null) {
            if (TRACE.on(TraceLevel.RARE)) {
                TRACE.message(TraceLevel.RARE, "qp.remoteAccessRefused", this + ": " + w.opcode + " with rkey 0x"
                    + Integer.toHexString(w.rkey) + " at 0x" + Long.toHexString(w.remoteAddress) + " (" + w.total
                    + " bytes) refused: " + refused);
            }
            notifyResponderError(l);
            w.complete(WcStatus.REM_ACCESS_ERR);
            return EXEC_DONE;
        }
        w.remoteBuf[0] = remote;
        w.remoteOff[0] = at;
        w.remoteLen[0] = (int) w.total;
        if (w.opcode == Opcode.RDMA_READ) {
            ScatterGather.copy(w.remoteBuf, w.remoteOff, w.remoteLen, 1, w.buf, w.off, w.len, w.count);
        } else {
            ScatterGather.copy(w.buf, w.off, w.len, w.count, w.remoteBuf, w.remoteOff, w.remoteLen, 1);
        }
        w.remoteBuf[0] = null;
        w.complete(WcStatus.SUCCESS);
        return EXEC_DONE;
    }

    /** Tells the peer's queue pair it refused a one-sided request: it goes to ERROR, as a responder would. */
    private void notifyResponderError(XpLink l) {
        if (l.txSeq - l.txAcked >= l.tx.slots()) {
            return; // cannot happen (one-sided requests wait for every answer); the peer then just stays up
        }
        long seq = l.txSeq++;
        int slot = (int) seq & (l.tx.slots() - 1);
        l.slotRequest[slot] = -1;
        l.slotDataEnd[slot] = l.dataTail;
        l.tx.publish(seq, Wire.OP_RESPONDER_ERROR, 0, 0, 0, -1, 0);
        l.wakeResponder();
    }

    /** Puts a message into our wire; the request completes when the responder answers. */
    private int publishXp(SendWqe w, XpLink l, int opcode, int length, boolean payload) {
        Wire tx = l.tx;
        if (l.txSeq - l.txAcked >= tx.slots()) {
            return EXEC_WAIT;
        }
        long seq = l.txSeq;
        int slotOffset = tx.slot(seq);
        int dataOffset = -1;
        int at = slotOffset + Wire.S_INLINE;
        if (payload && length > Wire.INLINE_MAX) {
            int cap = tx.dataCapacity();
            if (length > cap) {
                if (TRACE.on(TraceLevel.RARE)) {
                    TRACE.message(TraceLevel.RARE, "qp.messageTooLong", this + ": a " + length + "-byte " + w.opcode
                        + " to another process exceeds the wire's " + cap + "-byte data area (" + XpEngine.WIRE_BYTES_PROP
                        + ")");
                }
                w.complete(WcStatus.LOC_LEN_ERR);
                return EXEC_DONE;
            }
            long tail = l.dataTail;
            long pos = tail % cap;
            if (l.dataHead == tail && pos != 0) {
                // Nothing in the area: start this payload at its beginning, so any length up to the
                // capacity fits.
                tail += cap - pos;
                pos = 0;
                l.dataHead = tail;
                l.dataTail = tail;
            }
            long start = pos + length > cap ? tail + (cap - pos) : tail;
            if (start + length - l.dataHead > cap) {
                return EXEC_WAIT; // the data area frees up as answers come back
            }
            l.dataTail = start + length;
            dataOffset = (int) (start % cap);
            at = tx.dataAt(dataOffset);
        }
        if (payload) {
            ByteBuffer b = tx.buffer();
            for (int i = 0; i < w.count; i++) {
                int n = w.len[i];
                if (n > 0) {
                    b.put(at, w.buf[i], w.off[i], n);
                    at += n;
                }
            }
        }
        int slot = (int) seq & (tx.slots() - 1);
        l.slotRequest[slot] = w.seq;
        l.slotDataEnd[slot] = l.dataTail;
        w.state = SendWqe.IN_FLIGHT;
        l.txSeq = seq + 1;
        tx.publish(seq, opcode, w.flags, length, w.immData, dataOffset, Wire.arrivalStamp(device.faults().wireLatencyNs()));
        l.wakeResponder();
        return EXEC_DEFERRED;
    }

    /**
     * Turns the peer's answers into completions, in order, and runs the send queue again if it waited
     * for them.
     *
     * @return whether an answer was found
     */
    private boolean processAnswersLocked(XpLink l) {
        Wire tx = l.tx;
        boolean did = false;
        int mask = tx.slots() - 1;
        while (l.txAcked != l.txSeq) {
            long seq = l.txAcked;
            int answer = tx.answer(seq);
            int code = answer & 0xff;
            if (code != Wire.CODE_DONE && code != Wire.CODE_CANCELLED) {
                break;
            }
            int slot = (int) seq & mask;
            l.txAcked = seq + 1;
            l.dataHead = Math.max(l.dataHead, l.slotDataEnd[slot]);
            l.rnrSinceNs = 0;
            l.silentSinceNs = 0;
            did = true;
            long req = l.slotRequest[slot];
            if (req < 0) {
                continue;
            }
            SendWqe w = sq[(int) req & sqMask];
            if (w.seq != req || w.state != SendWqe.IN_FLIGHT) {
                continue; // flushed meanwhile
            }
            WcStatus status = code == Wire.CODE_CANCELLED ? WcStatus.RNR_RETRY_EXC_ERR : WcStatus.of(answer >>> 8);
            w.complete(status);
            if (status != WcStatus.SUCCESS) {
                traceRequesterError(w);
                enterErrorLocked();
                return true;
            }
        }
        if (did) {
            if (state == QpState.ERROR) {
                return true;
            }
            if (stall.get() == STALL_ANSWERS) {
                stall.set(STALL_NONE);
                progressLocked();
            } else {
                emitCompletionsLocked();
            }
        }
        return did;
    }

    /**
     * The requester's timers for its oldest unanswered message: RNR retries while the responder marks
     * it RNR, transport retries while the responder is silent (its queue pair in error or gone, its
     * link down). Runs on the progress thread, every {@link XpEngine#CHECK_NS} while it says so.
     *
     * @return whether a timer runs (the thread should look again within {@link XpEngine#CHECK_NS})
     */
    boolean xpTimers(long now) {
        XpLink l = link;
        if (l == null || !l.outstanding()) {
            return false;
        }
        if (!sqLock.tryLock()) {
            return true; // look again soon
        }
        try {
            if (link != l || state == QpState.ERROR) {
                return false;
            }
            processAnswersLocked(l);
            if (l.txAcked == l.txSeq || state == QpState.ERROR) {
                return false;
            }
            long seq = l.txAcked;
            int code = l.tx.answer(seq) & 0xff;
            if (l.tx.responderSilent() || device.faults().isLinkDown()) {
                // No answer will come (the responder cannot answer, or our link is down), whatever the
                // message's RNR or withdrawal state: a retry per ACK timeout, the error after retry_cnt
                // of them (reference B.2 "Transport retry"), as on the in-JVM path.
                if (l.silentSinceNs == 0) {
                    l.silentSinceNs = now;
                    l.silentRetries = 0;
                }
                long ackNs = attributes.ackTimeoutNs();
                while (l.silentRetries < retryCount && now - l.silentSinceNs >= (l.silentRetries + 1L) * ackNs) {
                    l.silentRetries++;
                    transportRetries++;
                }
                if (now - l.silentSinceNs < (retryCount + 1L) * ackNs) {
                    return true;
                }
                // Nobody answers: fail now (a responder that comes back finds us closed).
                long req = l.slotRequest[(int) seq & (l.tx.slots() - 1)];
                if (req >= 0) {
                    SendWqe w = sq[(int) req & sqMask];
                    if (w.seq == req && w.state == SendWqe.IN_FLIGHT) {
                        w.complete(WcStatus.RETRY_EXC_ERR);
                        traceRequesterError(w);
                    }
                }
                enterErrorLocked();
                return false;
            }
            l.silentSinceNs = 0;
            if (l.withdrawn == seq) {
                return true; // withdrawn after RNR: waiting for the responder's verdict
            }
            if (code == Wire.CODE_RNR) {
                if (l.rnrSinceNs == 0) {
                    l.rnrSinceNs = now;
                    rnrNaks++;
                }
                int limit = rnrRetryCount;
                if (limit != ConnectionParameters.RNR_RETRY_INFINITE && now - l.rnrSinceNs >= limit * l.peerMinRnrNs) {
                    // The responder decides: it answers CANCELLED (RNR_RETRY_EXC_ERR here), or DONE if a
                    // receive came first.
                    l.withdrawn = seq;
                    l.tx.withdraw(seq);
                    l.wakeResponder();
                }
                return true;
            }
            return l.rnrSinceNs != 0;
        } finally {
            sqLock.unlock();
        }
    }

    /**
     * Tells the responder to take nothing more (the queue pair is going to ERROR); a notice already
     * sent still arrives (the responder acts on notices even from a closed requester).
     */
    private void withdrawAllLocked(XpLink l) {
        if (!l.closed) {
            l.closed = true;
            tellPeer(() -> {
                l.tx.close();
                l.wakeResponder();
            });
        }
    }

    // ------------------------------------------------------------------ across processes: responder

    /** Our device's link changed: the responder publishes whether it answers now (drainLocked). */
    void xpLinkChanged() {
        XpLink l = link;
        if (l == null) {
            return;
        }
        rqLock.lock();
        try {
            if (link == l) {
                drainLocked(l);
            }
        } finally {
            rqLock.unlock();
        }
    }

    /**
     * Acts on the peer's messages in order, as its responder: delivers sends into our receives, consumes
     * receives for immediates, goes to ERROR on a refused one-sided request; marks a message RNR when
     * no receive is posted, and says "silent" while we cannot answer. Answers each message.
     *
     * @return whether a message was acted on
     */
    private boolean drainLocked(XpLink l) {
        Wire rx = l.rx;
        boolean answering = readyToRespond() && !device.faults().isLinkDown();
        if (answering == l.silent) {
            l.silent = !answering;
            rx.responderSilent(!answering);
            l.wakeRequester();
        }
        if (!answering) {
            return false;
        }
        boolean did = false;
        if (l.cancelAnswered >= 0) {
            return false;
        }
        boolean closed = rx.requesterClosed();
        long withdrawn = rx.withdrawn();
        while (true) {
            long seq = l.rxHead;
            if (!rx.published(seq) || (closed && rx.opcode(seq) != Wire.OP_RESPONDER_ERROR) || rx.arrivesInNs(seq) > 0) {
                break; // nothing (more) to take, or it is still on its way (the sender's wire latency)
            }
            if (seq == withdrawn) {
                l.cancelAnswered = seq; // the head stays here: nothing after it is taken either
                rx.answer(seq, Wire.CODE_CANCELLED, 0);
                did = true;
                break;
            }
            int op = rx.opcode(seq);
            RecvWqe r = null;
            boolean needsReceive = op == Opcode.SEND.code() || op == Opcode.SEND_WITH_IMM.code()
                || op == Opcode.RDMA_WRITE_WITH_IMM.code();
            if (needsReceive && (r = ring.peek()) == null) {
                if (l.rnrMarked != seq) {
                    // Mark (volatile), then look once more: a receive posted meanwhile is found here, or
                    // its poster sees the mark and drains (postRecv).
                    l.rnrMarked = seq;
                    rnrMarks++;
                    rx.markRnr(seq);
                    r = ring.peek();
                    if (r == null) {
                        l.wakeRequester(); // its RNR timer starts
                    }
                }
                if (r == null) {
                    break;
                }
            }
            l.rxHead = seq + 1;
            did = true;
            WcStatus answer = respondXp(l, seq, op, r);
            rx.answer(seq, Wire.CODE_DONE, answer.code());
            String failure = failAfterAnswer;
            if (failure != null) {
                // Only now: going to ERROR sets the silent word, and a requester that saw it before our
                // answer would time the message out (RETRY_EXC_ERR) instead of getting the error.
                failAfterAnswer = null;
                responderErrorLocked(failure);
            }
            if (answer != WcStatus.SUCCESS || !readyToRespond()) {
                break;
            }
        }
        if (did) {
            l.wakeRequester();
        }
        return did;
    }

    /** Acts on one taken message; returns the requester's status. */
    private WcStatus respondXp(XpLink l, long seq, int op, RecvWqe r) {
        Wire rx = l.rx;
        int flags = rx.flags(seq);
        boolean solicited = (flags & SendFlags.SOLICITED) != 0;
        int length = rx.length(seq);
        if (op == Wire.OP_RESPONDER_ERROR) {
            failAfterAnswer = "remote access";
            return WcStatus.SUCCESS;
        }
        if (op == Opcode.RDMA_WRITE_WITH_IMM.code()) {
            if (length < 0) {
                return malformed(l, "an RDMA WRITE of " + length + " bytes");
            }
            long wrId = r.wrId;
            ring.advance();
            recvCq.push(wrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, length, rx.imm(seq),
                WorkCompletion.WITH_IMM, qpNumber, solicited);
            return WcStatus.SUCCESS;
        }
        if (op != Opcode.SEND.code() && op != Opcode.SEND_WITH_IMM.code()) {
            return malformed(l, "unknown opcode " + op);
        }
        int at = rx.payloadAt(seq, length);
        if (at < 0) {
            return malformed(l, "a " + length + "-byte payload outside the wire");
        }
        long wrId = r.wrId;
        if (!r.usable()) {
            ring.advance();
            recvCq.push(wrId, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, 0, 0, qpNumber, true);
            failAfterAnswer = "bad receive";
            return WcStatus.REM_OP_ERR;
        }
        if (length > r.capacity) {
            ring.advance();
            recvCq.push(wrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, 0, 0, qpNumber, true);
            failAfterAnswer = "receive too small";
            return WcStatus.REM_INV_REQ_ERR;
        }
        r.scatterFrom(rx.buffer(), at, length);
        ring.advance();
        boolean imm = op == Opcode.SEND_WITH_IMM.code();
        recvCq.push(wrId, WcStatus.SUCCESS, WcOpcode.RECV, length, imm ? rx.imm(seq) : 0,
            imm ? WorkCompletion.WITH_IMM : 0, qpNumber, solicited);
        return WcStatus.SUCCESS;
    }

    /** A message this process cannot make sense of: the connection fails, nothing else does. */
    private WcStatus malformed(XpLink l, String what) {
        TRACE.message(TraceLevel.ERROR, "qp.malformedMessage", this + ": peer QP " + l.peerQpNumber + " of "
            + l.peerNode + " sent " + what + "; this queue pair goes to ERROR");
        failAfterAnswer = "malformed message";
        return WcStatus.REM_INV_REQ_ERR;
    }

    // ------------------------------------------------------------------ across processes: who looks

    /** The responder role's lock, which a poller holds while it takes messages (tests hold it as one would). */
    QpLock receiveLock() {
        return rqLock;
    }

    /** {@link #xpService}: something was found (a message taken or an answer completed). */
    static final int SERVICE_FOUND = 1;
    /** {@link #xpService}: a role was skipped because another thread held its lock. */
    static final int SERVICE_CONTENDED = 2;
    /** {@link #xpService}: a message for our responder is published but still on its way ({@link #xpArrivesInNs()}). */
    static final int SERVICE_ARRIVING = 4;

    /**
     * How long until the next message for our responder arrives: 0 when none is on its way (nothing
     * published, or it arrived).
     */
    long xpArrivesInNs() {
        XpLink l = link;
        if (l == null) {
            return 0;
        }
        long head = l.rxHead;
        return l.rx.published(head) ? l.rx.arrivesInNs(head) : 0;
    }

    /**
     * Looks at the wires once: messages for our responder, then answers for our requests. Called by
     * polls of our completion queues (each looks at what feeds it) and by the progress thread (both).
     *
     * <p>A role whose lock another thread holds is skipped: that thread is a poller looking itself, a
     * post, or a state change, all short. The progress thread is told so ({@link #SERVICE_CONTENDED})
     * and looks again soon rather than at once: retrying at once spun it on the lock of an application
     * that polls, a whole CPU taken from the pollers it would only have duplicated.
     *
     * @param polled the completion queue being polled, or null for the progress thread
     * @return {@link #SERVICE_FOUND} when anything was found, ORed with {@link #SERVICE_CONTENDED} when a
     *     role was skipped for its lock (progress thread only)
     */
    int xpService(SoftCompletionQueue polled) {
        XpLink l = link;
        if (l == null) {
            return 0;
        }
        if (device.faults().takeMemoryFault(qpNumber)) {
            throw new InternalError("a fault occurred in a recent unsafe memory access operation (injected: SoftFaults.memoryFault)");
        }
        boolean did = false;
        boolean contended = false;
        boolean arriving = false;
        // Messages first: they are what a peer waits for.
        if (polled == null || polled == recvCq) {
            long head = l.rxHead;
            boolean pending = l.rx.published(head) && (l.rnrMarked != head || l.rx.withdrawn() == head);
            if (pending && l.rx.arrivesInNs(head) > 0) {
                pending = false;
                arriving = true; // on its way: the progress thread looks again when it arrives
            }
            boolean answering = readyToRespond() && !device.faults().isLinkDown();
            if (pending || l.silent == answering) {
                if (rqLock.tryLock()) {
                    try {
                        if (link == l) {
                            did = drainLocked(l);
                        }
                    } finally {
                        rqLock.unlock();
                    }
                } else if (polled == null) {
                    contended = true; // the progress thread looks again soon rather than wait out its timeout
                }
            }
        }
        // Answers become completions of the send queue: looked at by its queue's polls, or by any poll
        // once half the wire waits for them.
        long out = l.txSeq - l.txAcked;
        if (out != 0 && (polled == null || polled == sendCq || out >= l.tx.slots() >> 1)) {
            int code = l.tx.answer(l.txAcked) & 0xff;
            if (code >= Wire.CODE_DONE) {
                if (sqLock.tryLock()) {
                    try {
                        if (link == l) {
                            did |= processAnswersLocked(l);
                        }
                    } finally {
                        sqLock.unlock();
                    }
                } else if (polled == null) {
                    contended = true;
                }
            } else if (code == Wire.CODE_RNR || l.tx.responderSilent() || device.faults().isLinkDown()) {
                long acked = l.txAcked;
                xpTimers(System.nanoTime()); // a poller runs the requester's timers while it polls
                did |= l.txAcked != acked; // the timers took answers that came meanwhile: completions
            } else if (l.tx.arrivesInNs(l.txAcked) == 0) {
                l.nudge(l.txAcked); // arrived, not acted on yet: wake the responder's process if it lingers
            }
        }
        return (did ? SERVICE_FOUND : 0) | (contended ? SERVICE_CONTENDED : 0) | (arriving ? SERVICE_ARRIVING : 0);
    }

    /**
     * Whether a poll would find nothing for this queue pair ({@link io.jsdp.verbs.WakeChannel#quiet}):
     * its completion queues hold nothing, no message of the peer waits at the head of our receive
     * wire, the responder's state needs no word to the peer, and (with {@code sendsToo}) no message
     * of ours is in flight. Every read mirrors a condition on which {@link #xpService} acts; any doubt
     * (link down, messages in flight that count) says not quiet.
     */
    boolean xpQuiet(boolean sendsToo) {
        XpLink l = link;
        if (l == null || destroyed || device.faults().isLinkDown() || !sendCq.looksEmpty() || !recvCq.looksEmpty()) {
            return false;
        }
        if (l.rx.published(l.rxHead) || l.silent == readyToRespond()) {
            return false;
        }
        long out = l.txSeq - l.txAcked;
        return out == 0 || !sendsToo && out < l.tx.slots() >> 1;
    }

    /**
     * The progress thread's look at who polls this queue pair's completion queues: a queue polled since
     * its last look and not armed for the next completion is covered by its poller; for the others it
     * asks the peer for a doorbell (the words in the wires). A solicited-only arm leaves a polled queue
     * covered: the poller's own service delivers a solicited message and raises the event, and once the
     * polling stops the next look (within {@link XpEngine#IDLE_NS}) asks for doorbells — so ordinary
     * messages to a queue armed only for solicited events ring no doorbell while its owner polls.
     *
     * @return whether both roles are covered by pollers
     */
    boolean xpCoverage() {
        XpLink l = link;
        if (l == null) {
            return true;
        }
        long sp = sendCq.polls();
        long rp = recvCq.polls();
        // a thread holding the direct doorbell is rung there, or looks before it sleeps
        boolean direct = l.tx.directHeld();
        boolean answersCovered = direct || sp != l.seenSendPolls && !sendCq.isArmedForNext();
        boolean messagesCovered = direct || rp != l.seenRecvPolls && !recvCq.isArmedForNext();
        l.seenSendPolls = sp;
        l.seenRecvPolls = rp;
        if (l.wantsAnswers == answersCovered) {
            l.wantsAnswers = !answersCovered;
            l.tx.requesterWantsDoorbell(!answersCovered);
            if (answersCovered && sendCq.isArmedForNext()) {
                // armed since we looked, by a thread that saw the word still set and did not wake us
                l.wantsAnswers = true;
                l.tx.requesterWantsDoorbell(true);
                answersCovered = false;
            }
        }
        if (l.wantsMessages == messagesCovered) {
            l.wantsMessages = !messagesCovered;
            l.rx.responderWantsDoorbell(!messagesCovered);
            if (messagesCovered && recvCq.isArmedForNext()) {
                l.wantsMessages = true;
                l.rx.responderWantsDoorbell(true);
                messagesCovered = false;
            }
        }
        return answersCovered && messagesCovered;
    }

    /**
     * Whether the words in the wires already ask the peer for doorbells for what {@code cq} completes of
     * this queue pair (an arming thread's check: volatile reads of words the progress thread writes).
     */
    boolean xpDoorbellsWanted(SoftCompletionQueue cq) {
        XpLink l = link;
        if (l == null) {
            return true;
        }
        if (l.tx.directHeld()) {
            return true; // the arming thread waits on the direct doorbell: the progress thread need not look
        }
        return (cq != sendCq || l.tx.requesterWantsDoorbell()) && (cq != recvCq || l.rx.responderWantsDoorbell());
    }

    /** Unlinks from the peer (destroy, RESET): we stop answering, our wire is deleted. Holds both locks. */
    private void unlinkLocked() {
        XpLink l = link;
        if (l != null) {
            link = null;
            tellPeer(() -> l.rx.responderSilent(true));
            l.direct.close();
            sendCq.removeXp(this);
            recvCq.removeXp(this);
            XpEngine engine = device.xp();
            engine.remove(this, l);
            engine.node().deleteSegment(l.txSegment);
        }
        if (pendingTx != null) {
            device.xp().node().deleteSegment(pendingTx);
            pendingTx = null;
            pendingWire = null;
        }
    }

    /**
     * A word for the peer in shared memory at an end (ERROR, RESET, destroy), best effort: a segment
     * truncated under the link faults, which the JVM reports as {@code InternalError}; the peer then
     * learns of the end from the connection manager or this process's death instead.
     */
    private static void tellPeer(Runnable words) {
        try {
            words.run();
        } catch (InternalError | RuntimeException e) {
            TRACE.record(TraceLevel.ERROR, "qp.teardownFault", e);
        }
    }

    // ------------------------------------------------------------------ observability

    private void transition(QpState to, String why) {
        QpState from = state;
        state = to;
        XpLink l = link;
        if (l != null && (to == QpState.ERROR || to == QpState.RESET)) {
            tellPeer(() -> {
                l.rx.responderSilent(true); // a requester across processes stops getting answers
                l.wakeRequester();
            });
        }
        int level = to == QpState.ERROR ? TraceLevel.RARE : TraceLevel.ENTRY_EXIT;
        if (TRACE.on(level)) {
            TRACE.record(level, to == QpState.ERROR ? "qp.error" : "qp.transition", qpNumber, from.ordinal(),
                to.ordinal(), why.hashCode());
        }
    }

    /** Requests resent after an ACK timeout, since creation; for tests and dumps. */
    long transportRetries() {
        sqLock.lock();
        try {
            return transportRetries;
        } finally {
            sqLock.unlock();
        }
    }

    /** Times a request found no receive at the peer (RNR NAKs), since creation; for tests and dumps. */
    long rnrNaks() {
        sqLock.lock();
        try {
            return rnrNaks;
        } finally {
            sqLock.unlock();
        }
    }

    /**
     * Times our responder found no receive for a peer's message on a wire and marked it RNR, since
     * creation (the in-JVM path counts the requester's {@link #rnrNaks()} instead); for tests and dumps.
     */
    long rnrMarks() {
        rqLock.lock();
        try {
            return rnrMarks;
        } finally {
            rqLock.unlock();
        }
    }

    /**
     * Racy reads, for dumps: the send queue's positions and stall, the posted receives and, across
     * processes (or devices), both wires' positions: whether the message at our responder's head is
     * published, marked RNR or withdrawn, the answer to our oldest message, and the doorbell words.
     */
    @Override
    public String describeDeviceState() {
        StringBuilder b = new StringBuilder(256);
        b.append("sq post=").append(sqPost).append(" exec=").append(sqExec).append(" done=").append(sqDone)
            .append(" stall=").append(stallName(stall.get())).append(" retryScheduled=").append(retryScheduled)
            .append(" readsInFlight=").append(readsInFlight).append(" rq posted=").append(ring.posted());
        XpLink l = link;
        if (l != null) {
            long head = l.rxHead;
            b.append(" | tx acked=").append(l.txAcked).append(" seq=").append(l.txSeq).append(" answer=")
                .append(l.txAcked == l.txSeq ? "-" : answerName(l.tx.answer(l.txAcked))).append(" rnrSince=").append(l.rnrSinceNs == 0 ? "-"
                    : (System.nanoTime() - l.rnrSinceNs) / 1_000_000 + "ms").append(" withdrawn=").append(l.withdrawn)
                .append(" requesterWantsDoorbell=").append(l.tx.requesterWantsDoorbell())
                .append(" | rx head=").append(head).append(" published=").append(l.rx.published(head))
                .append(" rnrMarked=").append(l.rnrMarked).append(" arrivesIn=").append(l.rx.published(head)
                    ? l.rx.arrivesInNs(head) : 0).append(" silent=").append(l.silent)
                .append(" responderWantsDoorbell=").append(l.rx.responderWantsDoorbell())
                .append(" rnrMarks=").append(rnrMarks).append(" cancelAnswered=").append(l.cancelAnswered);
        }
        return b.toString();
    }

    private static String stallName(int stall) {
        return switch (stall) {
            case STALL_NONE -> "none";
            case STALL_RNR -> "RNR";
            case STALL_NO_ACK -> "no-answer";
            case STALL_DELAY -> "delay";
            case STALL_FENCE -> "fence";
            case STALL_ANSWERS -> "answers";
            default -> Integer.toString(stall);
        };
    }

    private static String answerName(int answer) {
        return switch (answer & 0xff) {
            case 0 -> "none";
            case Wire.CODE_RNR -> "RNR";
            case Wire.CODE_DONE -> "DONE/" + (answer >>> 8);
            case Wire.CODE_CANCELLED -> "CANCELLED";
            default -> "0x" + Integer.toHexString(answer);
        };
    }

    /** Posted receives not yet consumed; for tests and dumps. */
    int postedReceives() {
        return ring.posted();
    }

    @Override
    public String toString() {
        return "QP " + qpNumber + " on " + device.name() + " (" + state + ")";
    }
}

/** Padding before the send-queue counters. */
abstract class QpPad0 {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

/**
 * The send queue's counters, guarded by the queue pair's sqLock. Written on every post; kept off the
 * cache lines of the fields the peer's thread reads on every message (state, ring, completion queue),
 * so a requester that is also a responder does not make its peer miss.
 */
abstract class QpSendState extends QpPad0 {
    long sqPost;
    long sqExec;
    long sqDone;
    long sqReclaimed;
    int readsInFlight;
    boolean retryScheduled;
    /** Requests sent again after an ACK timeout expired, and RNR NAKs received, since creation; for tests and dumps. */
    long transportRetries;
    long rnrNaks;
}

/** Padding after the send-queue counters. */
abstract class QpFields extends QpSendState {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}
