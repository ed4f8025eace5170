package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A CM id over DiSNI's {@code RdmaCmId}, with the state machine DiSNI does not keep: every event DiSNI
 * delivers is checked against the state (a late or repeated one is dropped), every wait has a deadline
 * (address and route resolution, the connect, the accepted side's wait for the RTU), and every id that
 * starts connecting ends in one terminal event.
 *
 * <p>What DiSNI lacks, and what the adapter does instead: no private data (a connect, accept or reject with
 * private data is refused with {@code EOPNOTSUPP}; Hello/HelloAck travel in-band); no event status (see
 * {@link DisniStatus#cmStatus}); no {@code rdma_reject} (reject destroys the request's id, which the active
 * side sees as REJECTED); no connect timeout (when {@link ConnectionParameters#connectTimeoutMs()} passes, the
 * adapter destroys the DiSNI queue pair and id, which rejects the request at the peer, and reports
 * UNREACHABLE); IPv4 only.
 *
 * <p>Locking: the state and the DiSNI calls of every id of a channel are guarded by the channel's
 * {@code lock}; the channel's CM thread takes it for each event and deadline.
 */
final class DisniCmId implements CmId, DisniObject {
    private static final TraceComponent TRACE = Trace.component("cm");

    enum State {
        IDLE, BOUND, LISTENING, ADDR_QUERY, ADDR_RESOLVED, ROUTE_QUERY, ROUTE_RESOLVED, CONNECTING, REQUEST_PENDING,
        ACCEPTED, ESTABLISHED, DISCONNECTING, DISCONNECTED, FAILED, CLOSED
    }

    private final DisniDevice device;
    private final DisniCmEventChannel channel;
    private final Tracked tracked;
    // guarded by channel.lock:
    /** The DiSNI id; null once destroyed (closed, rejected, or given up at the connect timeout). */
    private RdmaCmId raw;
    private State state;
    private DisniQueuePair qp;
    /** When the current wait ends, System.nanoTime(); 0 when nothing waits. */
    private long deadlineNs;
    private long queryStartNs;
    private long queryTimeoutNs;
    private InetSocketAddress local;
    private InetSocketAddress remote;

    DisniCmId(DisniDevice device, DisniCmEventChannel channel, RdmaCmId raw, State initial) {
        this.device = device;
        this.channel = channel;
        this.raw = raw;
        this.state = initial;
        this.tracked = device.resources().track(this, "CM id", "CM id on " + device.name());
        device.register(this);
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public CmEventChannel channel() {
        return channel;
    }

    State state() {
        return state;
    }

    @Override
    public void bind(InetSocketAddress address) throws VerbsException {
        InetSocketAddress a = ipv4(address);
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            if (state != State.IDLE) {
                throw new VerbsException(Errno.EINVAL, "bind: id is " + state);
            }
            device.cm.bindAddr(r, a);
            state = State.BOUND;
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("bind to " + a, e);
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public void listen(int backlog) throws VerbsException {
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            if (state != State.BOUND) {
                throw new VerbsException(Errno.EINVAL, "listen: id is " + state + ", bind it first");
            }
            device.cm.listen(r, backlog);
            state = State.LISTENING;
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("listen", e);
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public void resolveAddress(InetSocketAddress destination, int timeoutMs) throws VerbsException {
        InetSocketAddress d = ipv4(destination);
        if (timeoutMs <= 0) {
            throw new VerbsException(Errno.EINVAL, "resolveAddress: timeout must be positive");
        }
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            if (state != State.IDLE && state != State.BOUND) {
                throw new VerbsException(Errno.EINVAL, "resolveAddress: id is " + state);
            }
            long startNs = System.nanoTime(); // librdmacm's timer starts inside the call
            device.cm.resolveAddr(r, null, d, timeoutMs);
            startQuery(State.ADDR_QUERY, timeoutMs, startNs);
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("resolve " + d, e);
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public void resolveRoute(int timeoutMs) throws VerbsException {
        if (timeoutMs <= 0) {
            throw new VerbsException(Errno.EINVAL, "resolveRoute: timeout must be positive");
        }
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            if (state != State.ADDR_RESOLVED) {
                throw new VerbsException(Errno.EINVAL, "resolveRoute: id is " + state + ", resolve the address first");
            }
            long startNs = System.nanoTime();
            device.cm.resolveRoute(r, timeoutMs);
            startQuery(State.ROUTE_QUERY, timeoutMs, startNs);
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("resolve the route", e);
        } finally {
            channel.lock.unlock();
        }
    }

    /**
     * A resolution waits for its event; librdmacm ends it at the timeout, the adapter at twice that, at the
     * latest. The start is taken before the call into DiSNI, whose timer starts inside it: taken after, a
     * caller descheduled on its way out of the call saw the timeout's ADDR_ERROR reported as
     * {@code -EHOSTUNREACH} instead of {@code -ETIMEDOUT} (a CI run of DisniChainCmConformanceTest next to a
     * build on the 2 CPUs).
     */
    private void startQuery(State query, int timeoutMs, long startNs) {
        state = query;
        queryStartNs = startNs;
        queryTimeoutNs = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        deadlineNs = queryStartNs + 2 * queryTimeoutNs + TimeUnit.MILLISECONDS.toNanos(100);
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairAttributes attributes) throws VerbsException {
        if (!(pd instanceof DisniProtectionDomain p) || p.device != device) {
            throw new VerbsException(Errno.EINVAL, "createQueuePair: protection domain of another device");
        }
        if (!(attributes.sendCq() instanceof DisniCompletionQueue) || !(attributes.recvCq() instanceof DisniCompletionQueue)) {
            throw new VerbsException(Errno.EINVAL, "createQueuePair: send and receive completion queues of this device needed");
        }
        if (attributes.maxSendSge() > DisniQueuePair.MAX_SGE || attributes.maxRecvSge() > DisniQueuePair.MAX_SGE) {
            throw new VerbsException(Errno.EINVAL, "createQueuePair: DiSNI gives queue pairs " + DisniQueuePair.MAX_SGE
                + " scatter/gather entries, not " + Math.max(attributes.maxSendSge(), attributes.maxRecvSge()));
        }
        channel.lock.lock();
        try {
            usable();
            if (qp != null && !qp.isClosed()) {
                throw new VerbsException(Errno.EINVAL, "createQueuePair: id already has " + qp);
            }
            QueuePairAttributes a = attributes.copy();
            qp = new DisniQueuePair(this, p, a, createDisniQueuePair(p, a));
            return qp;
        } finally {
            channel.lock.unlock();
        }
    }

    /** Creates a DiSNI queue pair on this id. */
    IbvQP createDisniQueuePair(DisniProtectionDomain pd, QueuePairAttributes a) throws VerbsException {
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(((DisniCompletionQueue) a.sendCq()).cq);
        attr.setRecv_cq(((DisniCompletionQueue) a.recvCq()).cq);
        attr.cap().setMax_send_wr(a.maxSendWr());
        attr.cap().setMax_recv_wr(a.maxRecvWr());
        attr.cap().setMax_send_sge(DisniQueuePair.MAX_SGE);
        attr.cap().setMax_recv_sge(DisniQueuePair.MAX_SGE);
        attr.cap().setMax_inline_data(a.maxInlineData());
        channel.lock.lock();
        try {
            return device.cm.createQP(usable(), pd.pd, attr);
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("create a queue pair", e);
        } finally {
            channel.lock.unlock();
        }
    }

    /** Destroys the DiSNI queue pair of this id, if the id and it still exist. */
    void destroyDisniQueuePair() {
        channel.lock.lock();
        try {
            RdmaCmId r = raw;
            if (r != null && r.getQp() != null && r.getQp().isOpen()) {
                device.cm.destroyQP(r);
            }
        } catch (IOException e) {
            TRACE.record(TraceLevel.ERROR, "cm.destroyQpFailed", e);
        } finally {
            channel.lock.unlock();
        }
    }

    void queuePairClosed(DisniQueuePair closed) {
        channel.lock.lock();
        try {
            if (qp == closed) {
                qp = null;
            }
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public void connect(ConnectionParameters parameters) throws VerbsException {
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            if (state != State.ROUTE_RESOLVED) {
                throw new VerbsException(Errno.EINVAL, "connect: id is " + state + ", resolve the route first");
            }
            if (qp == null || qp.isClosed()) {
                throw new VerbsException(Errno.EINVAL, "connect: create the queue pair first");
            }
            refusePrivateData(parameters.privateData().length, ConnectionParameters.MAX_CONNECT_PRIVATE_DATA, "connect");
            device.cm.connect(r, connParam(parameters));
            state = State.CONNECTING;
            deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(parameters.connectTimeoutMs());
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("connect", e);
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public void accept(ConnectionParameters parameters) throws VerbsException {
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            if (state != State.REQUEST_PENDING) {
                throw new VerbsException(Errno.EINVAL, "accept: id is " + state + ", not a pending connect request");
            }
            if (qp == null || qp.isClosed()) {
                throw new VerbsException(Errno.EINVAL, "accept: create the queue pair first");
            }
            refusePrivateData(parameters.privateData().length, ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA, "accept");
            device.cm.accept(r, connParam(parameters));
            // librdmacm moves the passive queue pair to RTR and RTS before it sends the REP
            state = State.ACCEPTED;
            qp.connected();
            deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(parameters.connectTimeoutMs());
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("accept", e);
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public void reject(byte[] privateData) throws VerbsException {
        channel.lock.lock();
        try {
            usable();
            if (state != State.REQUEST_PENDING) {
                throw new VerbsException(Errno.EINVAL, "reject: id is " + state + ", not a pending connect request");
            }
            refusePrivateData(privateData == null ? 0 : privateData.length, ConnectionParameters.MAX_REJECT_PRIVATE_DATA,
                "reject");
            // DiSNI has no rdma_reject: destroying the request's id rejects it (IB CM: a consumer reject)
            destroyRaw();
            state = State.FAILED;
        } finally {
            channel.lock.unlock();
        }
    }

    private static void refusePrivateData(int length, int max, String call) throws VerbsException {
        if (length > max) {
            throw new VerbsException(Errno.EINVAL, call + ": " + length + " bytes of private data, at most " + max);
        }
        if (length > 0) {
            throw new VerbsException(Errno.EOPNOTSUPP, call + ": DiSNI carries no CM private data (exchange it in-band)");
        }
    }

    private static RdmaConnParam connParam(ConnectionParameters p) throws IOException {
        RdmaConnParam c = new RdmaConnParam();
        c.setRetry_count((byte) p.retryCount());
        c.setRnr_retry_count((byte) p.rnrRetryCount());
        return c;
    }

    @Override
    public void disconnect() throws VerbsException {
        channel.lock.lock();
        try {
            RdmaCmId r = usable();
            switch (state) {
                case ESTABLISHED:
                case ACCEPTED:
                    state = State.DISCONNECTING;
                    deadlineNs = 0;
                    break;
                case DISCONNECTED:
                    break; // the peer went first: this moves the local queue pair to ERROR, nothing more
                default:
                    throw new VerbsException(Errno.EINVAL, "disconnect: id is " + state + ", not connected");
            }
            if (qp != null) {
                qp.errorCompletion();
            }
            if (device.cm.disconnect(r) != 0) {
                throw new VerbsException(Errno.EINVAL, "disconnect: rdma_disconnect failed");
            }
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("disconnect", e);
        } finally {
            channel.lock.unlock();
        }
    }

    /** {@code modify(ERROR)} of this id's queue pair: {@code rdma_disconnect}, whatever the id's state. */
    void disconnectForError() throws VerbsException {
        channel.lock.lock();
        try {
            RdmaCmId r = raw;
            if (r == null) {
                return;
            }
            if (state == State.ESTABLISHED || state == State.ACCEPTED) {
                state = State.DISCONNECTING;
                deadlineNs = 0;
            }
            device.cm.disconnect(r); // fails (-1) on an id that is not connected; the queue pair is in ERROR anyway
        } catch (VerbsException e) {
            throw e; // the adapter's own refusal, not DiSNI's
        } catch (IOException e) {
            throw DisniDevice.failure("move the queue pair to ERROR", e);
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        channel.lock.lock();
        try {
            if (raw != null) {
                SocketAddress a = device.cm.getSrcAddr(raw);
                if (a instanceof InetSocketAddress i) {
                    local = i;
                }
            }
            return local;
        } catch (IOException e) {
            return local;
        } finally {
            channel.lock.unlock();
        }
    }

    @Override
    public InetSocketAddress remoteAddress() {
        channel.lock.lock();
        try {
            if (raw != null) {
                SocketAddress a = device.cm.getDstAddr(raw);
                if (a instanceof InetSocketAddress i) {
                    remote = i;
                }
            }
            return remote;
        } catch (IOException e) {
            return remote;
        } finally {
            channel.lock.unlock();
        }
    }

    /**
     * Applies one DiSNI event to the state. Called by the channel's CM thread with the channel's lock held.
     *
     * @param type the event
     * @param listen the listener, for CONNECT_REQUEST
     * @param nowNs System.nanoTime()
     * @return the port's event, or null when the event does not apply to the id's state (late, repeated, or of
     *     a kind the port does not use)
     */
    CmEvent onEvent(CmEventType type, DisniCmId listen, long nowNs) {
        switch (type) {
            case ADDR_RESOLVED:
                return resolved(State.ADDR_QUERY, State.ADDR_RESOLVED, type);
            case ROUTE_RESOLVED:
                return resolved(State.ROUTE_QUERY, State.ROUTE_RESOLVED, type);
            case ADDR_ERROR:
                return resolutionFailed(State.ADDR_QUERY, type, nowNs);
            case ROUTE_ERROR:
                return resolutionFailed(State.ROUTE_QUERY, type, nowNs);
            case CONNECT_REQUEST:
                state = State.REQUEST_PENDING;
                return new CmEvent(type, this, listen, 0, null);
            case CONNECT_RESPONSE:
                // librdmacm reports it only for an id without a queue pair, which the port never connects: the
                // connection cannot be completed
                if (state != State.CONNECTING) {
                    return null;
                }
                return fail(CmEventType.CONNECT_ERROR);
            case CONNECT_ERROR:
            case UNREACHABLE:
            case REJECTED:
                if (state != State.CONNECTING && state != State.ACCEPTED && state != State.REQUEST_PENDING) {
                    return null;
                }
                return fail(type);
            case ESTABLISHED:
                if (state != State.CONNECTING && state != State.ACCEPTED) {
                    return null;
                }
                state = State.ESTABLISHED;
                deadlineNs = 0;
                if (qp != null) {
                    qp.connected();
                }
                return new CmEvent(type, this, null, 0, null);
            case DISCONNECTED:
                if (state != State.ESTABLISHED && state != State.ACCEPTED && state != State.DISCONNECTING) {
                    return null; // one DISCONNECTED per connection
                }
                state = State.DISCONNECTED;
                deadlineNs = 0;
                return new CmEvent(type, this, null, 0, null);
            case DEVICE_REMOVAL:
                if (state == State.FAILED || state == State.CLOSED) {
                    return null;
                }
                return fail(type);
            case ADDR_CHANGE:
            case TIMEWAIT_EXIT:
                return new CmEvent(type, this, null, 0, null);
            case MULTICAST_JOIN:
            case MULTICAST_ERROR:
            default:
                TRACE.message(TraceLevel.ERROR, "cm.unexpectedEvent", "DiSNI reported " + type + " for a CM id in "
                    + state + "; the port does no multicast: dropped");
                return null;
        }
    }

    private CmEvent resolved(State query, State done, CmEventType type) {
        if (state != query) {
            return null;
        }
        state = done;
        deadlineNs = 0;
        return new CmEvent(type, this, null, 0, null);
    }

    private CmEvent resolutionFailed(State query, CmEventType type, long nowNs) {
        if (state != query) {
            return null;
        }
        state = State.FAILED;
        deadlineNs = 0;
        return new CmEvent(type, this, null, DisniStatus.cmStatus(type, nowNs - queryStartNs >= queryTimeoutNs), null);
    }

    private CmEvent fail(CmEventType type) {
        state = State.FAILED;
        deadlineNs = 0;
        if (qp != null) {
            qp.errorCompletion();
        }
        return new CmEvent(type, this, null, DisniStatus.cmStatus(type, false), null);
    }

    /**
     * Ends a wait whose deadline passed. Called by the CM thread with the channel's lock held.
     *
     * @param nowNs System.nanoTime()
     * @return the terminal event, or null when nothing is due
     */
    CmEvent onDeadline(long nowNs) {
        if (deadlineNs == 0 || nowNs - deadlineNs < 0) {
            return null;
        }
        switch (state) {
            case ADDR_QUERY:
                state = State.FAILED;
                deadlineNs = 0;
                return new CmEvent(CmEventType.ADDR_ERROR, this, null, -Errno.ETIMEDOUT, null);
            case ROUTE_QUERY:
                state = State.FAILED;
                deadlineNs = 0;
                return new CmEvent(CmEventType.ROUTE_ERROR, this, null, -Errno.ETIMEDOUT, null);
            case CONNECTING:
                // No answer in time. Destroying the DiSNI id rejects the request at the peer (IB CM: a REJ with
                // reason timeout), so a late accept there fails too; the queue pair goes with it.
                destroyRaw();
                CmEvent e = fail(CmEventType.UNREACHABLE);
                return e;
            case ACCEPTED:
                // no RTU in time: the connection never came up; rdma_disconnect moves the queue pair to ERROR
                try {
                    device.cm.disconnect(raw);
                } catch (IOException ignored) {
                    // the event below says what happened
                }
                return fail(CmEventType.UNREACHABLE);
            default:
                deadlineNs = 0;
                return null;
        }
    }

    /** Destroys the DiSNI queue pair and id; the port objects stay until closed. Lock held. */
    private void destroyRaw() {
        RdmaCmId r = raw;
        if (r == null) {
            return;
        }
        if (qp != null) {
            qp.dropDisniQueuePair();
            qp.errorCompletion();
        }
        try {
            device.cm.destroyCmId(r);
        } catch (IOException e) {
            TRACE.record(TraceLevel.ERROR, "cm.destroyIdFailed", e);
        }
        raw = null;
        channel.forget(r);
    }

    private RdmaCmId usable() throws VerbsException {
        RdmaCmId r = raw;
        if (state == State.CLOSED) {
            throw new VerbsException(Errno.EINVAL, "CM id is closed");
        }
        if (r == null) {
            throw new VerbsException(Errno.EINVAL, "CM id has no DiSNI id any more (" + state + ")");
        }
        return r;
    }

    private static InetSocketAddress ipv4(InetSocketAddress a) throws VerbsException {
        if (a == null || !(a.getAddress() instanceof Inet4Address)) {
            throw new VerbsException(Errno.EINVAL, "DiSNI is IPv4 only: " + a);
        }
        return a;
    }

    @Override
    public void close() {
        forceClose();
    }

    @Override
    public int closeOrder() {
        return 0;
    }

    @Override
    public void forceClose() {
        DisniQueuePair q;
        channel.lock.lock();
        try {
            if (state == State.CLOSED) {
                return;
            }
            q = qp;
        } finally {
            channel.lock.unlock();
        }
        if (q != null) {
            q.close(); // destroys the DiSNI queue pair first: rdma_destroy_id leaves it behind
        }
        channel.lock.lock();
        try {
            if (state == State.CLOSED) {
                return;
            }
            destroyRaw();
            state = State.CLOSED;
            deadlineNs = 0;
        } finally {
            channel.lock.unlock();
        }
        channel.idClosed(this);
        device.unregister(this);
        tracked.release();
    }

    @Override
    public String toString() {
        return "CM id on " + device.name() + " (" + state + ")";
    }
}
