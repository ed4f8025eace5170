package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.jsdp.ras.Tracked;
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
import java.io.IOException;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A queue pair over DiSNI's {@code IbvQP}.
 *
 * <p><b>Posting.</b> DiSNI serialises a work request when its call object ({@code SVCPostSend}) is made and
 * lets only wr_id, send flags, remote address and key, and the SGEs be changed afterwards. The adapter keeps
 * one send call object per opcode and number of SGEs, changes those fields and re-executes it, so posting
 * allocates nothing. What cannot be changed costs a new call object: the immediate value of a
 * {@code *_WITH_IMM} request (one is kept per opcode, rebuilt when the value changes). A receive's call
 * object cannot be changed at all ({@code RecvWRMod} only reads the wr_id): receive call objects are kept by
 * wr_id and reused for the same request, which is what a ring of receive buffers reposts; another request
 * costs one new call object. libdisni gives every queue pair four SGEs and ignores {@code sq_sig_all}: the
 * adapter checks the caller's SGE limits itself and signals every request of a {@code signalAll} queue pair.
 * DiSNI 2.1 never passes an atomic's operands, so atomics are refused.
 *
 * <p><b>State.</b> DiSNI cannot query or modify a queue pair. {@link #state()} is what the adapter has
 * seen: INIT when created, RTS when accepted or established, ERROR on a disconnect, a terminal CM event or an
 * unsuccessful completion polled from a queue this queue pair alone uses. A transition the device makes on
 * its own (a responder that failed a request) shows once its completion is polled. {@link #modify} uses what
 * DiSNI has: ERROR is {@code rdma_disconnect}, which librdmacm starts by moving the queue pair to ERROR (on
 * a connection the peer then sees DISCONNECTED too); RESET destroys the DiSNI queue pair (everything
 * outstanding vanishes, as RESET discards it) and INIT creates a new one on the same id, with a new number.
 */
final class DisniQueuePair implements QueuePair, DisniObject {
    private static final Opcode[] OPCODES = Opcode.values();
    /** libdisni's {@code MAX_SGE}: every queue pair has this many SGEs each way. */
    static final int MAX_SGE = 4;

    private final DisniCmId id;
    private final DisniProtectionDomain pd;
    private final QueuePairAttributes attributes;
    final DisniCompletionQueue sendCq;
    final DisniCompletionQueue recvCq;
    private final Tracked tracked;

    /** The DiSNI queue pair; null in RESET and once destroyed. Written under {@link #sendLock} and {@link #recvLock}. */
    private volatile IbvQP qp;
    private volatile int qpNumber;
    private volatile QpState state = QpState.INIT;
    private volatile boolean closed;

    /** Guards the send call objects: DiSNI's are not thread-safe. */
    private final ReentrantLock sendLock = new ReentrantLock();
    private final SendCall[][] sendCalls = new SendCall[OPCODES.length][MAX_SGE + 1];
    /** Guards the receive call objects. */
    private final ReentrantLock recvLock = new ReentrantLock();
    private final RecvCall[] recvCalls;

    DisniQueuePair(DisniCmId id, DisniProtectionDomain pd, QueuePairAttributes attributes, IbvQP qp)
        throws VerbsException {
        this.id = id;
        this.pd = pd;
        this.attributes = attributes;
        this.sendCq = (DisniCompletionQueue) attributes.sendCq();
        this.recvCq = (DisniCompletionQueue) attributes.recvCq();
        this.qp = qp;
        this.qpNumber = number(qp);
        int slots = Integer.highestOneBit(Math.max(16, Math.min(4096, 2 * attributes.maxRecvWr())) * 2 - 1);
        this.recvCalls = new RecvCall[slots];
        this.tracked = pd.device.resources().track(this, "QP", "QP " + qpNumber + " on " + pd.device.name());
        pd.users.incrementAndGet();
        sendCq.attach(this);
        recvCq.attach(this);
        pd.device.register(this);
    }

    private static int number(IbvQP qp) throws VerbsException {
        try {
            return qp.getQp_num();
        } catch (IOException e) {
            throw DisniDevice.failure("read the queue-pair number", e);
        }
    }

    @Override
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public QpState state() {
        return state;
    }

    /**
     * Not available: neither DiSNI 2.1 ({@code IbvQP} has no query) nor libibverbs count RNR retries per
     * queue pair; the port's hardware counters are device-wide (see {@link QueuePair#rnrRetries()}).
     */
    @Override
    public long rnrRetries() {
        return RNR_RETRIES_NOT_AVAILABLE;
    }

    /** The CM moved the queue pair to RTR and RTS (accept, or ESTABLISHED). */
    void connected() {
        if (state == QpState.INIT) {
            state = QpState.RTS;
        }
    }

    /** An error completion of this queue pair, a disconnect or a terminal CM event: the device is in ERROR. */
    void errorCompletion() {
        if (state != QpState.RESET) {
            state = QpState.ERROR;
        }
    }

    @Override
    public int postSend(SendWorkRequest r) {
        IbvQP q = qp;
        if (q == null) {
            return Errno.EINVAL;
        }
        Opcode op = r.opcode();
        int n = r.numSge();
        if (n > attributes.maxSendSge()) {
            return Errno.EINVAL;
        }
        if (op == Opcode.ATOMIC_CMP_AND_SWP || op == Opcode.ATOMIC_FETCH_AND_ADD) {
            return Errno.EINVAL;
        }
        int flags = attributes.signalAll() ? r.flags() | SendFlags.SIGNALED : r.flags();
        sendLock.lock();
        try {
            SendCall c = sendCalls[op.ordinal()][n];
            if (c == null || c.qp != q || (op.hasImmediate() && c.immData != r.immData())) {
                if (c != null) {
                    c.call.free();
                }
                c = new SendCall(q, op, n, r.immData());
                sendCalls[op.ordinal()][n] = c;
            }
            c.mod.setWr_id(r.wrId());
            c.mod.setSend_flags(flags);
            c.rdma.setRemote_addr(r.remoteAddress());
            c.rdma.setRkey(r.rkey());
            for (int j = 0; j < n; j++) {
                SVCPostSend.SgeMod s = c.sges[j];
                s.setAddr(r.sgeAddress(j));
                s.setLength(r.sgeLength(j));
                s.setLkey(r.sgeLkey(j));
            }
            c.call.execute();
            return Errno.OK;
        } catch (IOException e) {
            return DisniStatus.errno(e);
        } finally {
            sendLock.unlock();
        }
    }

    @Override
    public int postRecv(ReceiveWorkRequest r) {
        IbvQP q = qp;
        if (q == null) {
            return Errno.EINVAL;
        }
        if (r.numSge() > attributes.maxRecvSge()) {
            return Errno.EINVAL;
        }
        recvLock.lock();
        try {
            long wrId = r.wrId();
            int i = (int) ((wrId ^ (wrId >>> 32)) * 0x9E3779B9L) & (recvCalls.length - 1);
            RecvCall c = recvCalls[i];
            if (c == null || c.qp != q || !c.matches(r)) {
                if (c != null) {
                    c.call.free();
                }
                c = new RecvCall(q, r);
                recvCalls[i] = c;
            }
            c.call.execute();
            return Errno.OK;
        } catch (IOException e) {
            return DisniStatus.errno(e);
        } finally {
            recvLock.unlock();
        }
    }

    @Override
    public void modify(QpState target) throws VerbsException {
        switch (target) {
            case ERROR:
                if (qp == null) {
                    throw new VerbsException(Errno.EINVAL, this + " has no DiSNI queue pair (RESET)");
                }
                id.disconnectForError();
                errorCompletion();
                return;
            case RESET:
                dropDisniQueuePair();
                state = QpState.RESET;
                return;
            case INIT:
                if (state != QpState.RESET) {
                    throw new VerbsException(Errno.EINVAL, "INIT is reached from RESET only, " + this + " is " + state);
                }
                IbvQP fresh = id.createDisniQueuePair(pd, attributes);
                setQp(fresh);
                qpNumber = number(fresh);
                state = QpState.INIT;
                return;
            default:
                throw new VerbsException(Errno.EINVAL, "the connection manager moves queue pairs to " + target);
        }
    }

    /** Destroys the DiSNI queue pair and forgets the call objects made for it. */
    void dropDisniQueuePair() {
        if (qp == null) {
            return;
        }
        setQp(null);
        id.destroyDisniQueuePair();
    }

    private void setQp(IbvQP q) {
        sendLock.lock();
        recvLock.lock();
        try {
            for (SendCall[] byOpcode : sendCalls) {
                for (int n = 0; n < byOpcode.length; n++) {
                    if (byOpcode[n] != null) {
                        byOpcode[n].call.free();
                        byOpcode[n] = null;
                    }
                }
            }
            for (int i = 0; i < recvCalls.length; i++) {
                if (recvCalls[i] != null) {
                    recvCalls[i].call.free();
                    recvCalls[i] = null;
                }
            }
            qp = q;
        } finally {
            recvLock.unlock();
            sendLock.unlock();
        }
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
    public void close() {
        forceClose();
    }

    @Override
    public int closeOrder() {
        return 1;
    }

    @Override
    public void forceClose() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        dropDisniQueuePair();
        sendCq.detach(this);
        recvCq.detach(this);
        pd.users.decrementAndGet();
        id.queuePairClosed(this);
        pd.device.unregister(this);
        tracked.release();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "QP " + qpNumber + " on " + pd.device.name();
    }

    /** A send call object for one opcode and number of SGEs, with its write-through handles. */
    private final class SendCall {
        final IbvQP qp;
        final int immData;
        final SVCPostSend call;
        final SVCPostSend.SendWRMod mod;
        final SVCPostSend.RdmaMod rdma;
        final SVCPostSend.SgeMod[] sges;

        SendCall(IbvQP qp, Opcode op, int n, int immData) throws IOException {
            this.qp = qp;
            this.immData = immData;
            IbvSendWR wr = new IbvSendWR();
            wr.setOpcode(op.code());
            wr.setImm_data(immData);
            LinkedList<IbvSge> list = new LinkedList<>();
            for (int j = 0; j < n; j++) {
                list.add(new IbvSge());
            }
            wr.setSg_list(list);
            wr.setNum_sge(n); // libdisni serialises getNum_sge(), not the list's size
            this.call = pd.device.verbs.postSend(qp, List.of(wr), null);
            this.mod = call.getWrMod(0);
            this.rdma = mod.getRdmaMod();
            this.sges = new SVCPostSend.SgeMod[n];
            for (int j = 0; j < n; j++) {
                sges[j] = mod.getSgeMod(j);
            }
        }
    }

    /** A receive call object for one exact request (wr_id and SGEs), which DiSNI cannot change. */
    private final class RecvCall {
        final IbvQP qp;
        final long wrId;
        final long[] address;
        final int[] length;
        final int[] lkey;
        final SVCPostRecv call;

        RecvCall(IbvQP qp, ReceiveWorkRequest r) throws IOException {
            this.qp = qp;
            this.wrId = r.wrId();
            int n = r.numSge();
            address = new long[n];
            length = new int[n];
            lkey = new int[n];
            LinkedList<IbvSge> list = new LinkedList<>();
            for (int j = 0; j < n; j++) {
                address[j] = r.sgeAddress(j);
                length[j] = r.sgeLength(j);
                lkey[j] = r.sgeLkey(j);
                IbvSge s = new IbvSge();
                s.setAddr(address[j]);
                s.setLength(length[j]);
                s.setLkey(lkey[j]);
                list.add(s);
            }
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(wrId);
            wr.setSg_list(list);
            wr.setNum_sge(n);
            this.call = pd.device.verbs.postRecv(qp, List.of(wr), null);
        }

        boolean matches(ReceiveWorkRequest r) {
            if (r.wrId() != wrId || r.numSge() != address.length) {
                return false;
            }
            for (int j = 0; j < address.length; j++) {
                if (r.sgeAddress(j) != address[j] || r.sgeLength(j) != length[j] || r.sgeLkey(j) != lkey[j]) {
                    return false;
                }
            }
            return true;
        }
    }
}
