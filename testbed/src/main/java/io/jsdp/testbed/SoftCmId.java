package io.jsdp.testbed;

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
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * A SoftRdma connection-manager id, with librdmacm's event sequences (project reference
 * {@code verbs-semantics.md}, B.3). All state changes of both ends of a connection happen under the
 * fabric's {@code cmLock}; events go to the ids' channels, through the receiving device's CM faults.
 * Every id that starts connecting ends in a terminal event: the connect timeout turns silence into
 * UNREACHABLE.
 */
final class SoftCmId implements CmId, SoftDevice.SoftObject {
    static final TraceComponent TRACE = Trace.component("cm");

    /** Connection-manager states of an id. */
    enum State {
        IDLE, BOUND, LISTENING, ADDR_QUERY, ADDR_RESOLVED, ROUTE_RESOLVED, CONNECTING, REQUEST_PENDING,
        ESTABLISHED, DISCONNECTED, FAILED, CLOSED
    }

    private final SoftDevice device;
    private final SoftCmEventChannel channel;
    private final InJvmFabric fabric;
    private final Tracked tracked;

    // ---- guarded by fabric.cmLock ----
    private State state = State.IDLE;
    private InetSocketAddress local;
    private InetSocketAddress remote;
    /** The port this id holds in the fabric (bind or resolve), or 0. */
    private int boundPort;
    private int backlog;
    private int pendingRequests;
    /** Active side: the passive id of the request; passive side: the active id. */
    private SoftCmId peer;
    /** Passive side: the listener that produced this id. */
    private SoftCmId listener;
    private ConnectionParameters connectParameters;
    private volatile SoftQueuePair qp;

    SoftCmId(SoftDevice device, SoftCmEventChannel channel, InJvmFabric fabric) {
        this.device = device;
        this.channel = channel;
        this.fabric = fabric;
        channel.users.incrementAndGet();
        this.tracked = device.resources().track(this, "CM_ID", "CM id on " + device.name());
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

    boolean isListening() {
        return state == State.LISTENING;
    }

    @Override
    public void bind(InetSocketAddress address) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.IDLE) {
                throw new VerbsException(Errno.EINVAL, "bind: id is " + state);
            }
            InetAddress a = address.getAddress();
            if (a == null || !fabric.isLocal(a)) {
                throw new VerbsException(Errno.EINVAL, "bind: " + address + " is not an address of this host");
            }
            boundPort = fabric.bind(this, address.getPort());
            local = new InetSocketAddress(a, boundPort);
            transition(State.BOUND);
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void listen(int backlog) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.BOUND) {
                throw new VerbsException(Errno.EINVAL, "listen: id is " + state + ", bind it first");
            }
            this.backlog = Math.max(1, backlog);
            transition(State.LISTENING);
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void resolveAddress(InetSocketAddress destination, int timeoutMs) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.IDLE && state != State.BOUND) {
                throw new VerbsException(Errno.EINVAL, "resolveAddress: id is " + state);
            }
            if (timeoutMs <= 0) {
                throw new VerbsException(Errno.EINVAL, "resolveAddress: timeout must be positive");
            }
            InetAddress a = destination.getAddress();
            remote = destination;
            if (a == null || device.faults().isBlackholed(a)) {
                // Nothing answers: the resolution times out.
                transition(State.ADDR_QUERY);
                device.schedule(() -> addressTimeout(), TimeUnit.MILLISECONDS.toNanos(timeoutMs));
                return;
            }
            if (!fabric.isLocal(a)) {
                transition(State.FAILED);
                deliver(this, CmEventType.ADDR_ERROR, null, -Errno.EHOSTUNREACH, null);
                return;
            }
            if (state == State.IDLE) {
                InetAddress source = a.isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : a;
                boundPort = fabric.bind(this, 0);
                local = new InetSocketAddress(source, boundPort);
            }
            transition(State.ADDR_RESOLVED);
            deliver(this, CmEventType.ADDR_RESOLVED, null, 0, null);
        } finally {
            fabric.cmLock.unlock();
        }
    }

    private void addressTimeout() {
        fabric.cmLock.lock();
        try {
            if (state == State.ADDR_QUERY) {
                transition(State.FAILED);
                deliver(this, CmEventType.ADDR_ERROR, null, -Errno.ETIMEDOUT, null);
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void resolveRoute(int timeoutMs) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.ADDR_RESOLVED) {
                throw new VerbsException(Errno.EINVAL, "resolveRoute: id is " + state + ", resolve the address first");
            }
            transition(State.ROUTE_RESOLVED);
            deliver(this, CmEventType.ROUTE_RESOLVED, null, 0, null);
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairAttributes attributes) throws VerbsException {
        device.ensureOpen();
        if (!(pd instanceof SoftProtectionDomain) || ((SoftProtectionDomain) pd).softDevice() != device) {
            throw new VerbsException(Errno.EINVAL, "createQueuePair: protection domain of another device");
        }
        if (((SoftProtectionDomain) pd).isClosed()) {
            throw new VerbsException(Errno.EINVAL, "createQueuePair: protection domain is closed");
        }
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (qp != null) {
                throw new VerbsException(Errno.EINVAL, "createQueuePair: id already has " + qp);
            }
            qp = new SoftQueuePair(device, (SoftProtectionDomain) pd, attributes);
            return qp;
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public QueuePair queuePair() {
        return qp;
    }

    @Override
    public void connect(ConnectionParameters p) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.ROUTE_RESOLVED) {
                throw new VerbsException(Errno.EINVAL, "connect: id is " + state + ", resolve the route first");
            }
            if (qp == null) {
                throw new VerbsException(Errno.EINVAL, "connect: create the queue pair first");
            }
            byte[] data = p.privateData();
            if (data.length > ConnectionParameters.MAX_CONNECT_PRIVATE_DATA) {
                throw new VerbsException(Errno.EINVAL, "connect: " + data.length + " bytes of private data, at most "
                    + ConnectionParameters.MAX_CONNECT_PRIVATE_DATA);
            }
            connectParameters = p;
            transition(State.CONNECTING);
            device.schedule(this::connectTimeout, TimeUnit.MILLISECONDS.toNanos(p.connectTimeoutMs()));
            if (device.faults().dropsConnectRequests()) {
                TRACE.record(TraceLevel.RARE, "cm.connectRequestLost", boundPort);
                return;
            }
            SoftCmId l = fabric.listener(remote);
            if (l == null) {
                transition(State.FAILED);
                deliver(this, CmEventType.REJECTED, null, -Errno.ECONNREFUSED, null);
                return;
            }
            if (l.pendingRequests >= l.backlog) {
                transition(State.FAILED);
                deliver(this, CmEventType.REJECTED, null, -Errno.ECONNREFUSED, null);
                TRACE.record(TraceLevel.RARE, "cm.backlogFull", l.boundPort, l.backlog);
                return;
            }
            SoftCmId child = new SoftCmId(l.device, l.channel, fabric);
            child.state = State.REQUEST_PENDING;
            child.local = new InetSocketAddress(remote.getAddress(), l.boundPort);
            child.remote = local;
            child.listener = l;
            child.peer = this;
            this.peer = child;
            l.pendingRequests++;
            deliver(child, CmEventType.CONNECT_REQUEST, l, 0, data);
        } finally {
            fabric.cmLock.unlock();
        }
    }

    private void connectTimeout() {
        fabric.cmLock.lock();
        try {
            if (state == State.CONNECTING) {
                transition(State.FAILED);
                SoftCmId child = peer;
                peer = null;
                if (child != null) {
                    child.peer = null;
                }
                deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void accept(ConnectionParameters p) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.REQUEST_PENDING) {
                throw new VerbsException(Errno.EINVAL, "accept: id is " + state + ", not a pending connect request");
            }
            if (qp == null) {
                throw new VerbsException(Errno.EINVAL, "accept: create the queue pair first");
            }
            byte[] data = p.privateData();
            if (data.length > ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA) {
                throw new VerbsException(Errno.EINVAL, "accept: " + data.length + " bytes of private data, at most "
                    + ConnectionParameters.MAX_ACCEPT_PRIVATE_DATA);
            }
            SoftCmId active = peer;
            if (active == null || active.state != State.CONNECTING || active.qp == null) {
                // The active side gave up (timeout or destroyed): the REP gets no RTU.
                releasePendingSlot();
                transition(State.FAILED);
                deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
                return;
            }
            // Our queue pair first (librdmacm: RTR and RTS before the REP); if it cannot, accept fails and
            // the request stays pending.
            qp.connect(active.qp, p);
            releasePendingSlot();
            try {
                active.qp.connect(qp, active.connectParameters);
            } catch (VerbsException e) {
                // The REP arrived but the active queue pair cannot go to RTR/RTS (librdmacm
                // ucma_process_conn_resp): CONNECT_ERROR there and a REJ here, which moves our queue pair
                // to ERROR (kernel cma_ib_handler, IB_CM_REJ_RECEIVED).
                active.peer = null;
                peer = null;
                active.transition(State.FAILED);
                active.flushQueuePair("connect error");
                deliver(active, CmEventType.CONNECT_ERROR, null, -e.errno(), null);
                transition(State.FAILED);
                flushQueuePair("rejected");
                deliver(this, CmEventType.REJECTED, null, CmEvent.REJECT_CONSUMER, null);
                return;
            }
            transition(State.ESTABLISHED);
            active.transition(State.ESTABLISHED);
            deliver(active, CmEventType.ESTABLISHED, null, 0, data);
            deliver(this, CmEventType.ESTABLISHED, null, 0, null);
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void reject(byte[] privateData) throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state != State.REQUEST_PENDING) {
                throw new VerbsException(Errno.EINVAL, "reject: id is " + state + ", not a pending connect request");
            }
            if (privateData != null && privateData.length > ConnectionParameters.MAX_REJECT_PRIVATE_DATA) {
                throw new VerbsException(Errno.EINVAL, "reject: " + privateData.length + " bytes of private data, at most "
                    + ConnectionParameters.MAX_REJECT_PRIVATE_DATA);
            }
            releasePendingSlot();
            transition(State.FAILED);
            SoftCmId active = peer;
            peer = null;
            if (active != null && active.state == State.CONNECTING) {
                active.peer = null;
                active.transition(State.FAILED);
                deliver(active, CmEventType.REJECTED, null, CmEvent.REJECT_CONSUMER, privateData);
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void disconnect() throws VerbsException {
        fabric.cmLock.lock();
        try {
            ensureUsable();
            if (state == State.ESTABLISHED) {
                transition(State.DISCONNECTED);
                flushQueuePair("disconnect");
                deliver(this, CmEventType.DISCONNECTED, null, 0, null);
                disconnectPeer();
            } else if (state == State.DISCONNECTED) {
                // The peer disconnected first: we already had our event; now our queue pair flushes.
                flushQueuePair("disconnect");
            } else {
                throw new VerbsException(Errno.EINVAL, "disconnect: id is " + state + ", not connected");
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    /** The peer learns of the disconnection (DREQ); its queue pair stays in RTS until it disconnects. */
    private void disconnectPeer() {
        SoftCmId p = peer;
        if (p != null && p.state == State.ESTABLISHED) {
            p.transition(State.DISCONNECTED);
            deliver(p, CmEventType.DISCONNECTED, null, 0, null);
        }
    }

    private void flushQueuePair(String why) {
        SoftQueuePair q = qp;
        if (q != null && q.state() != QpState.ERROR) {
            q.enterError(why);
        }
    }

    private void releasePendingSlot() {
        SoftCmId l = listener;
        if (l != null && l.pendingRequests > 0) {
            l.pendingRequests--;
        }
        listener = null;
    }

    @Override
    public InetSocketAddress localAddress() {
        fabric.cmLock.lock();
        try {
            return local;
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public InetSocketAddress remoteAddress() {
        fabric.cmLock.lock();
        try {
            return remote;
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public void close() {
        forceClose();
    }

    @Override
    public void forceClose() {
        fabric.cmLock.lock();
        try {
            if (state == State.CLOSED) {
                return;
            }
            switch (state) {
                case REQUEST_PENDING: {
                    releasePendingSlot();
                    SoftCmId active = peer;
                    if (active != null && active.state == State.CONNECTING) {
                        active.peer = null;
                        active.transition(State.FAILED);
                        deliver(active, CmEventType.REJECTED, null, -Errno.ECONNREFUSED, null);
                    }
                    break;
                }
                case CONNECTING:
                    if (peer != null) {
                        peer.peer = null;
                    }
                    break;
                case ESTABLISHED:
                    disconnectPeer();
                    break;
                default:
                    break;
            }
            if (boundPort != 0) {
                fabric.unbind(this, boundPort);
            }
            peer = null;
            transition(State.CLOSED);
        } finally {
            fabric.cmLock.unlock();
        }
        SoftQueuePair q = qp;
        if (q != null) {
            q.forceClose();
        }
        channel.users.decrementAndGet();
        device.unregister(this);
        tracked.release();
    }

    private void ensureUsable() throws VerbsException {
        device.ensureOpen();
        if (state == State.CLOSED) {
            throw new VerbsException(Errno.EINVAL, "CM id is closed");
        }
    }

    private void transition(State to) {
        State from = state;
        state = to;
        if (TRACE.on(TraceLevel.ENTRY_EXIT)) {
            TRACE.record(TraceLevel.ENTRY_EXIT, "cm.transition", System.identityHashCode(this), from.ordinal(),
                to.ordinal());
        }
    }

    private static void deliver(SoftCmId target, CmEventType type, SoftCmId listenId, int status, byte[] data) {
        int level = type.isTerminal() ? TraceLevel.RARE : TraceLevel.ENTRY_EXIT;
        if (TRACE.on(level)) {
            TRACE.record(level, "cm.event", type.ordinal(), status, System.identityHashCode(target));
        }
        target.channel.deliver(new CmEvent(type, target, listenId, status, data));
    }

    @Override
    public String toString() {
        return "CmId[" + state + " " + local + " -> " + remote + "]";
    }
}
