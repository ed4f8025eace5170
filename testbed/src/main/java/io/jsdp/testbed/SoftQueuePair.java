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

    /** Why the send queue is stalled; read by the peer's receive path to decide whether to kick. */
    static final int STALL_NONE = 0;
    static final int STALL_RNR = 1;
    static final int STALL_NO_ACK = 2;
    static final int STALL_DELAY = 3;
    static final int STALL_FENCE = 4;

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
                return Errno.ENOMEM;
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
            return Errno.OK;
        } finally {
            sqLock.unlock();
        }
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
        // Placeholder until the wire lands: the connection manager can already connect; data does not move.
        return new XpEndpoint(qpNumber, pd.number(), 0, 0);
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
    void connectRemote(io.jsdp.testbed.shm.NodeId node, XpEndpoint remote, ConnectionParameters p) throws VerbsException {
        // Placeholder until the wire lands: no peer, so requests time out as towards a silent peer.
        sqLock.lock();
        try {
            if (state != QpState.INIT || destroyed) {
                throw new VerbsException(Errno.EINVAL, this + " must be in INIT to connect, is " + state);
            }
            this.retryCount = p.retryCount();
            this.rnrRetryCount = p.rnrRetryCount();
            transition(QpState.RTR, "connect");
            transition(QpState.RTS, "connect");
        } finally {
            sqLock.unlock();
        }
    }

    /**
     * The peer's process is gone: what is outstanding fails as after a transport timeout
     * ({@code RETRY_EXC_ERR}, the rest flushed) and the queue pair goes to ERROR.
     */
    void peerLost() {
        enterError("peer lost");
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
                r = reachable(p) ? p.respondRead(w) : EXEC_NO_ACK;
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

    // ------------------------------------------------------------------ observability

    private void transition(QpState to, String why) {
        QpState from = state;
        state = to;
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
