package io.jsdp.testbed;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.Tracked;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.Rendezvous;
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
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * A SoftRdma connection-manager id, with librdmacm's event sequences (project reference
 * {@code verbs-semantics.md}, B.3). All state changes happen under the fabric's {@code cmLock}; events
 * go to the ids' channels, through the receiving device's CM faults. Every id that starts connecting
 * ends in a terminal event: the connect timeout turns silence into UNREACHABLE.
 *
 * <p>Two paths connect ids. When an end is a device of the in-JVM fabric only, the active id reaches the
 * listener and the passive id directly and changes both under one hold of {@code cmLock}. Between two
 * host-fabric devices (in two processes or in one) the ends only exchange
 * {@link CmMessage}s through their nodes' {@link HostCm}: each end changes its own state when it acts
 * or when a message arrives, and never touches the other end. The host path has one more state,
 * {@link State#ACCEPTED} (REP sent, RTU not yet received), and the peer process's death is an input
 * ({@link #onPeerGone()}). docs/softrdma.md has the message sequences.
 */
final class SoftCmId implements CmId, SoftDevice.SoftObject {
    static final TraceComponent TRACE = Trace.component("cm");

    /** Connection-manager states of an id. */
    enum State {
        IDLE, BOUND, LISTENING, ADDR_QUERY, ADDR_RESOLVED, ROUTE_RESOLVED, CONNECTING, REQUEST_PENDING,
        /** Host path, passive side: accepted (queue pair RTS, REP sent), waiting for the RTU. */
        ACCEPTED,
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
    /**
     * Active side: the network namespace of the destination when it is another of this host's
     * ({@link Rendezvous#NETNS}), found in resolveAddress; -1 for this process's own.
     */
    private long remoteNetns = -1;
    private int backlog;
    private int pendingRequests;
    /** Active side: the passive id of the request; passive side: the active id. */
    private SoftCmId peer;
    /** Passive side: the listener that produced this id. */
    private SoftCmId listener;
    private ConnectionParameters connectParameters;
    /**
     * The connect timeout while CONNECTING, cancelled when the id leaves that state: a pending task
     * would keep the id, its queue pair and their mapped segments reachable for the whole timeout
     * after every connection (issue 7: thousands per second).
     */
    private java.util.concurrent.ScheduledFuture<?> connectTimer;
    private volatile SoftQueuePair qp;
    /** The bound port is also claimed host-wide (rendezvous entry {@code cm-<port>}). */
    private boolean portClaimed;

    // ---- host path; guarded by fabric.cmLock ----
    /** Set when this id connects through the host fabric (active) or was made by a REQ (passive). */
    private HostCm hostCm;
    /** This id's handle at {@link #hostCm}, the address of messages to it. */
    private long handle;
    /** The other end's node: where the REQ went (active) or came from (passive). */
    private NodeId peerNode;
    /** The other end's handle at {@link #peerNode}; 0 until the REP tells the active side. */
    private long peerHandle;
    /** Passive side: the active queue pair's endpoint, from the REQ. */
    private XpEndpoint peerEndpoint;
    /**
     * The other end will not answer any more: it gave up (REJ), the connection ended in a REJ we sent,
     * or its process is gone. Nothing more is sent to it.
     */
    private boolean peerGone;

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

    /** The address this id bound (a listener's: what it takes connections to). Holds cmLock. */
    InetAddress boundAddress() {
        return local.getAddress();
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
            HostCm cm = device.host() == null ? null : device.host().cm();
            boundPort = fabric.bind(this, address.getPort(), cm == null ? null : cm::claimPort);
            portClaimed = cm != null;
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
        resolveAddress(null, destination, timeoutMs);
    }

    @Override
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMs)
        throws VerbsException {
        if (source != null && (source.getAddress() == null || !fabric.isLocal(source.getAddress()))) {
            throw new VerbsException(Errno.EADDRNOTAVAIL, "resolveAddress: " + source + " is not an address of this host");
        }
        // Where the destination is, found before the lock (interface and directory lookups): an address of
        // this namespace, or of another namespace of the host that this one has a route to, whose
        // processes the host fabric reaches as well
        InetAddress dst = destination.getAddress();
        boolean here = dst != null && fabric.isLocal(dst);
        InetAddress routed = null;
        long otherNetns = -1;
        HostFabric host = device.host();
        if (dst != null && !here && host != null && !device.faults().isBlackholed(dst)) {
            routed = fabric.routedSource(dst);
            otherNetns = routed == null ? -1 : host.cm().namespaceOf(dst);
            if (otherNetns >= 0) {
                host.cm().publishAddresses(); // so the peer finds our source among our addresses
            }
        }
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
            if (!here && otherNetns < 0) {
                transition(State.FAILED);
                deliver(this, CmEventType.ADDR_ERROR, null, -Errno.EHOSTUNREACH, null);
                return;
            }
            remoteNetns = otherNetns;
            if (state == State.IDLE) {
                // as TCP's: the address the caller bound, else the one routing picks
                InetAddress from = source != null && !source.getAddress().isAnyLocalAddress() ? source.getAddress()
                    : routed != null ? routed : fabric.sourceFor(a);
                int port = source == null ? 0 : source.getPort();
                if (port == 0) {
                    // a source port: never a destination, so not claimed host-wide
                    boundPort = fabric.bind(this, 0, null);
                    port = boundPort;
                }
                local = new InetSocketAddress(from, port); // a caller's port is the caller's (its TCP socket's)
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
            // rdma_destroy_qp clears id->qp: an id whose queue pair was destroyed may create another
            if (qp != null && !qp.isDestroyed()) {
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
            // Directly in this JVM when an end is a device of the in-JVM fabric only (and neither insists
            // on the host fabric). Two host-fabric devices connect through wires even in one process: each
            // side then works on its own memory, and a round trip is faster than when the requester
            // writes into the responder's queues (docs/softrdma.md, "Two paths in one JVM").
            // no listener of this JVM is in another namespace
            SoftCmId l = remoteNetns < 0 ? fabric.listener(remote) : null;
            SoftDevice.Fabric mine = device.fabricChoice();
            SoftDevice.Fabric theirs = l == null ? null : l.device.fabricChoice();
            boolean inJvm = l != null && mine != SoftDevice.Fabric.HOST_ONLY && theirs != SoftDevice.Fabric.HOST_ONLY
                && (mine == SoftDevice.Fabric.JVM || theirs == SoftDevice.Fabric.JVM);
            HostFabric host = inJvm ? null : device.host();
            NodeId owner = host == null ? null
                : remoteNetns < 0 ? host.cm().liveOwner(remote.getPort()) : host.cm().liveOwner(remoteNetns, remote.getPort());
            // The wire first (only when there is someone to connect to): if it cannot be made, connect
            // fails and the id stays as it was.
            XpEndpoint endpoint = owner == null ? null : qp.openWire();
            connectParameters = p;
            transition(State.CONNECTING);
            connectTimer = device.schedule(this::connectTimeout, TimeUnit.MILLISECONDS.toNanos(p.connectTimeoutMs()));
            if (device.faults().dropsConnectRequests()) {
                TRACE.record(TraceLevel.RARE, "cm.connectRequestLost", boundPort);
                return;
            }
            if (host != null) {
                connectAcrossHost(host.cm(), owner, endpoint, data);
                return;
            }
            if (!inJvm) {
                // No listener in this JVM, or one only the host fabric reaches and we are not on it.
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

    /**
     * Host path, active side, holding cmLock: sends the REQ to the process that holds the port. No
     * live holder ({@code owner} null), or one that cannot be reached, refuses at once, as a kernel
     * without a listener.
     */
    private void connectAcrossHost(HostCm cm, NodeId owner, XpEndpoint endpoint, byte[] data) {
        hostCm = cm;
        handle = cm.register(this);
        if (owner == null) {
            TRACE.record(TraceLevel.RARE, "cm.noPortOwner", remote.getPort());
            peerGone = true;
            transition(State.FAILED);
            deliver(this, CmEventType.REJECTED, null, -Errno.ECONNREFUSED, null);
            return;
        }
        peerNode = owner;
        if (!cm.send(owner, CmMessage.req(handle, remote, local, connectParameters, endpoint, data))) {
            peerGone = true;
            transition(State.FAILED);
            deliver(this, CmEventType.REJECTED, null, -Errno.ECONNREFUSED, null);
        }
    }

    private void connectTimeout() {
        fabric.cmLock.lock();
        try {
            if (state == State.CONNECTING) {
                transition(State.FAILED);
                if (hostCm != null) {
                    cancelRequest();
                } else {
                    SoftCmId child = peer;
                    peer = null;
                    if (child != null) {
                        child.peer = null;
                    }
                }
                deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    /**
     * Host path, active side giving up (timeout or close) before the REP: a REJ with -ETIMEDOUT tells the
     * passive side, whose accept then ends UNREACHABLE as in one JVM (IB: destroying an id in REQ_SENT
     * sends a REJ, reason timeout).
     */
    private void cancelRequest() {
        sendToPeer(CmMessage.rej(peerHandle, handle, -Errno.ETIMEDOUT, null));
        peerGone = true;
    }

    /** Host path: sends to the other end unless it is gone (or was never reached); false when not sent. */
    private boolean sendToPeer(ByteBuffer message) {
        if (peerNode == null || peerGone) {
            return false;
        }
        return hostCm.send(peerNode, message);
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
            if (hostCm != null) {
                acceptAcrossHost(p, data);
                return;
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

    /**
     * Host path, passive side, holding cmLock: our queue pair connects to the active one (RTR, RTS),
     * then the REP carries our endpoint; ESTABLISHED follows the RTU. An active side already gone makes
     * the accept end UNREACHABLE, as in one JVM.
     */
    private void acceptAcrossHost(ConnectionParameters p, byte[] data) throws VerbsException {
        if (peerGone) {
            releasePendingSlot();
            transition(State.FAILED);
            deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
            return;
        }
        try {
            qp.connectRemote(peerNode, peerEndpoint, p);
        } catch (VerbsException e) {
            if (e.errno() != Errno.ENOENT) {
                throw e; // our queue pair cannot connect: accept fails and the request stays pending
            }
            // The active queue pair's segments are gone: it was destroyed (its id closing, its process
            // dying) and the news is on its way. As a late accept in one JVM: UNREACHABLE, and the
            // active id, should it still be connecting, is rejected.
            TRACE.record(TraceLevel.RARE, "cm.activeQueuePairGone", peerEndpoint.qpNumber(), peerNode.pid());
            releasePendingSlot();
            transition(State.FAILED);
            sendToPeer(CmMessage.rej(peerHandle, handle, CmEvent.REJECT_CONSUMER, null));
            peerGone = true;
            deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
            return;
        }
        XpEndpoint mine;
        try {
            mine = qp.openWire();
        } catch (VerbsException e) {
            // Our queue pair is connected but cannot answer: give the request up as a consumer reject.
            releasePendingSlot();
            transition(State.FAILED);
            flushQueuePair("accept failed");
            sendToPeer(CmMessage.rej(peerHandle, handle, CmEvent.REJECT_CONSUMER, null));
            peerGone = true;
            throw e;
        }
        releasePendingSlot();
        transition(State.ACCEPTED);
        if (!sendToPeer(CmMessage.rep(peerHandle, handle, mine, data))) {
            peerGone = true; // the active process died since its REQ
            transition(State.FAILED);
            peerLost();
            deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
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
            if (hostCm != null) {
                sendToPeer(CmMessage.rej(peerHandle, handle, CmEvent.REJECT_CONSUMER, privateData));
                peerGone = true;
                return;
            }
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
            // ACCEPTED (host path): the passive queue pair is RTS and may already carry data, as after an
            // in-JVM accept, so it may disconnect before its ESTABLISHED arrives.
            if (state == State.ESTABLISHED || state == State.ACCEPTED) {
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
        if (hostCm != null) {
            sendToPeer(CmMessage.dreq(peerHandle, handle));
            return;
        }
        SoftCmId p = peer;
        if (p != null && p.state == State.ESTABLISHED) {
            p.transition(State.DISCONNECTED);
            deliver(p, CmEventType.DISCONNECTED, null, 0, null);
        }
    }

    // ------------------------------------------------------------------ host path: what arrives

    /**
     * A REQ reached this node (node thread, holding cmLock): a child id in REQUEST_PENDING on the
     * listener's channel, or a REJ (-ECONNREFUSED) when nobody listens on the port here or the backlog is
     * full.
     */
    static void onRequest(HostCm cm, NodeId from, CmMessage m) {
        InetSocketAddress destination = m.destination();
        SoftCmId l = cm.fabric().listener(destination);
        // Only a host-fabric device's listener is reachable from the host fabric.
        if (l == null || l.device.host() == null || !l.device.isOpen()) {
            TRACE.record(TraceLevel.RARE, "cm.noListener", destination.getPort(), from.pid());
            cm.send(from, CmMessage.rej(m.from(), 0, -Errno.ECONNREFUSED, null));
            return;
        }
        if (!l.fabric.isLocal(destination.getAddress())) {
            // a wildcard listener takes the addresses of its namespace, no other
            TRACE.record(TraceLevel.RARE, "cm.noListener", destination.getPort(), from.pid());
            cm.send(from, CmMessage.rej(m.from(), 0, -Errno.ECONNREFUSED, null));
            return;
        }
        InetAddress claimed = m.source() == null ? null : m.source().getAddress();
        if (claimed == null || !l.fabric.isLocal(claimed) && !cm.publishes(from, claimed)) {
            // a process connects from an address of its own namespace (this one's, or one it published as
            // another namespace's): a claim of any other is refused
            TRACE.message(TraceLevel.RARE, "cm.foreignSource", "a request from " + m.source() + " (pid " + from.pid()
                + ") claims a source that is no address of this namespace or of its own; refused");
            cm.send(from, CmMessage.rej(m.from(), 0, -Errno.ECONNREFUSED, null));
            return;
        }
        if (l.pendingRequests >= l.backlog) {
            TRACE.record(TraceLevel.RARE, "cm.backlogFull", l.boundPort, l.backlog);
            cm.send(from, CmMessage.rej(m.from(), 0, -Errno.ECONNREFUSED, null));
            return;
        }
        SoftCmId child = new SoftCmId(l.device, l.channel, l.fabric);
        child.state = State.REQUEST_PENDING;
        child.local = new InetSocketAddress(destination.getAddress(), l.boundPort);
        child.remote = m.source();
        child.listener = l;
        child.hostCm = cm;
        child.peerNode = from;
        child.peerHandle = m.from();
        child.peerEndpoint = m.endpoint();
        child.handle = cm.registerRequest(child, from, m.from());
        l.pendingRequests++;
        deliver(child, CmEventType.CONNECT_REQUEST, l, 0, m.privateData());
    }

    /** Whether a message from {@code from}'s id {@code fromHandle} may be for this id. Holds cmLock. */
    boolean isPeer(NodeId from, long fromHandle) {
        return from.equals(peerNode) && (peerHandle == 0 || peerHandle == fromHandle);
    }

    /** Whether this id's other end is on {@code node}. Holds cmLock. */
    boolean isPeer(NodeId node) {
        return node.equals(peerNode);
    }

    /** A REP, RTU, REJ or DREQ for this id (node thread, holding cmLock). */
    void onMessage(CmMessage m) {
        switch (m.type()) {
            case CmMessage.REP:
                onReply(m);
                break;
            case CmMessage.RTU:
                if (state == State.ACCEPTED) {
                    transition(State.ESTABLISHED);
                    deliver(this, CmEventType.ESTABLISHED, null, 0, null);
                }
                break;
            case CmMessage.REJ:
                onReject(m.status(), m.privateData());
                break;
            case CmMessage.DREQ:
                // Crossing DREQs: whoever disconnected first is DISCONNECTED already and ignores the other's.
                if (state == State.ESTABLISHED || state == State.ACCEPTED) {
                    transition(State.DISCONNECTED);
                    deliver(this, CmEventType.DISCONNECTED, null, 0, null);
                }
                break;
            default:
                break;
        }
    }

    /**
     * The passive side accepted: our queue pair connects to its (RTR, RTS), ESTABLISHED with the
     * accept's private data, and the RTU. A REP for an id that gave up is ignored: the REJ our timeout or
     * close sent tells the passive side.
     */
    private void onReply(CmMessage m) {
        if (state != State.CONNECTING || peerHandle != 0) {
            TRACE.record(TraceLevel.RARE, "cm.lateReply", state.ordinal(), m.from());
            return;
        }
        peerHandle = m.from();
        try {
            qp.connectRemote(peerNode, m.endpoint(), connectParameters);
        } catch (VerbsException e) {
            // As in one JVM (librdmacm ucma_process_conn_resp): CONNECT_ERROR here, and a REJ there, which
            // moves the passive queue pair to ERROR and reports REJECTED.
            transition(State.FAILED);
            flushQueuePair("connect error");
            deliver(this, CmEventType.CONNECT_ERROR, null, -e.errno(), null);
            sendToPeer(CmMessage.rej(peerHandle, handle, CmEvent.REJECT_CONSUMER, null));
            peerGone = true;
            return;
        }
        transition(State.ESTABLISHED);
        qp.openDirect(); // before the application hears: its first wait may use it once the peer answers
        deliver(this, CmEventType.ESTABLISHED, null, 0, m.privateData());
        sendToPeer(CmMessage.rtu(peerHandle, handle));
    }

    private void onReject(int status, byte[] data) {
        switch (state) {
            case CONNECTING: // refused (no listener, backlog, request destroyed) or rejected by the consumer
                peerGone = true;
                transition(State.FAILED);
                deliver(this, CmEventType.REJECTED, null, status, data);
                break;
            case REQUEST_PENDING: // the active side gave up: accept will end UNREACHABLE
                peerGone = true;
                break;
            case ACCEPTED: // the active side gave up (-ETIMEDOUT) or its queue pair could not connect (28)
                peerGone = true;
                transition(State.FAILED);
                flushQueuePair("rejected");
                if (status == -Errno.ETIMEDOUT) {
                    deliver(this, CmEventType.UNREACHABLE, null, status, null);
                } else {
                    deliver(this, CmEventType.REJECTED, null, status, data);
                }
                break;
            default:
                break;
        }
    }

    /**
     * The other end's process is gone (node thread, holding cmLock). Connecting ends UNREACHABLE
     * (-ETIMEDOUT), as silence would after the connect timeout; a pending request's accept will; an
     * accepted or established connection's queue pair fails as after a transport timeout, and an
     * established one reports DISCONNECTED.
     */
    void onPeerGone() {
        peerGone = true;
        switch (state) {
            case CONNECTING:
                transition(State.FAILED);
                deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
                break;
            case ACCEPTED:
                transition(State.FAILED);
                peerLost();
                deliver(this, CmEventType.UNREACHABLE, null, -Errno.ETIMEDOUT, null);
                break;
            case ESTABLISHED:
                transition(State.DISCONNECTED);
                peerLost();
                deliver(this, CmEventType.DISCONNECTED, null, 0, null);
                break;
            case DISCONNECTED: // the peer disconnected first and our queue pair still runs: now it fails
                peerLost();
                break;
            default:
                break;
        }
    }

    private void peerLost() {
        SoftQueuePair q = qp;
        if (q != null && q.state() != QpState.ERROR) {
            q.peerLost();
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
                    if (hostCm != null) {
                        sendToPeer(CmMessage.rej(peerHandle, handle, -Errno.ECONNREFUSED, null));
                        break;
                    }
                    SoftCmId active = peer;
                    if (active != null && active.state == State.CONNECTING) {
                        active.peer = null;
                        active.transition(State.FAILED);
                        deliver(active, CmEventType.REJECTED, null, -Errno.ECONNREFUSED, null);
                    }
                    break;
                }
                case CONNECTING:
                    if (hostCm != null) {
                        cancelRequest();
                    } else if (peer != null) {
                        peer.peer = null;
                    }
                    break;
                case ACCEPTED: // the active side gets ESTABLISHED from our REP, then DISCONNECTED
                case ESTABLISHED:
                    disconnectPeer();
                    break;
                default:
                    break;
            }
            if (boundPort != 0) {
                fabric.unbind(this, boundPort);
                if (portClaimed) {
                    device.host().cm().releasePort(boundPort);
                }
            }
            if (hostCm != null) {
                hostCm.unregister(this, handle, peerNode, peerHandle);
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
        if (from == State.CONNECTING && to != State.CONNECTING && connectTimer != null) {
            connectTimer.cancel(false);
            connectTimer = null;
        }
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
