package io.jsdp.testbed;

import io.jsdp.ras.TraceLevel;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.PeerListener;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The connection manager of this process's node on the host fabric: the host-wide port space (the
 * rendezvous directory's {@code cm-<port>} entries), and the transport of {@link CmMessage}s between
 * the ids of connections whose ends are in different processes (or, for
 * {@link SoftDevice.Fabric#HOST_ONLY} devices, in this one). One per {@link HostFabric}.
 *
 * <p>It routes; the ids decide. A message is handed, on the node thread and holding the in-JVM
 * fabric's {@code cmLock} (the one lock of connection-manager state), to the id it is addressed to:
 * by the receiver's handle, or, before the sender knows it, by the sender's node and handle. A
 * message for an id that no longer exists is dropped, except a REP, which is answered with a REJ so
 * the passive side cannot wait for an RTU that will never come. A lost peer process
 * ({@link PeerListener}) is reported to every id whose other end it held.
 *
 * <p>Sends happen under {@code cmLock}, so what one id sends its peer arrives in the order its state
 * changed; a send never waits for the peer ({@link ShmNode#sendMessage} queues what the socket does
 * not take, and a connect to a peer's socket completes or is refused at once).
 */
final class HostCm implements PeerListener {
    /** The {@link ShmNode} message kind of connection-manager messages. */
    static final int MESSAGE_KIND = 1;
    /** Handles are unique in the JVM, so a message for an id of an earlier node of this process finds nobody. */
    private static final AtomicLong HANDLES = new AtomicLong();

    private final InJvmFabric fabric;
    private final ShmNode node;
    // ---- guarded by fabric.cmLock ----
    /** Ids on the host path by handle, from connect (active) or the REQ (passive) until close. */
    private final Map<Long, SoftCmId> ids = new HashMap<>();
    /** Passive ids by the active end that asked for them: REJs sent before the REP name them so. */
    private final Map<PeerRef, SoftCmId> requests = new HashMap<>();
    /** The flyweight over received messages; used under cmLock. */
    private final CmMessage in = new CmMessage();
    /** Messages sent and received (tests: which path a connection took). */
    private long sent;
    private long received;

    /** An id of another node (or of this one): its node and handle there. */
    private record PeerRef(NodeId node, long handle) {
    }

    private HostCm(InJvmFabric fabric, ShmNode node) {
        this.fabric = fabric;
        this.node = node;
    }

    /**
     * Creates the connection manager of {@code node} and registers it for messages and lost peers.
     *
     * @param fabric the in-JVM fabric (its {@code cmLock} and bound ids)
     * @param node this process's node
     * @return the connection manager
     */
    static HostCm start(InJvmFabric fabric, ShmNode node) {
        HostCm cm = new HostCm(fabric, node);
        node.setMessageHandler(MESSAGE_KIND, cm::onMessage);
        node.addPeerListener(cm);
        cm.publishAddresses();
        return cm;
    }

    // ------------------------------------------------------------------ network namespaces

    /**
     * Publishes the addresses of this process's network namespace ({@link Rendezvous#publishAddresses}),
     * so that processes of other namespaces of the host reach its listeners over the fabric where their
     * routing reaches its addresses. Again before each connect into another namespace, so the peer finds
     * the source address among ours even when it came after the node opened.
     */
    void publishAddresses() {
        try {
            node.rendezvous().publishAddresses(node.id(), InJvmFabric.interfaceAddresses());
        } catch (IOException e) {
            SoftCmId.TRACE.record(TraceLevel.RARE, "cm.publishFailed", e);
        }
    }

    /** Withdraws what {@link #publishAddresses} published (the node is closing). */
    void withdrawAddresses() {
        node.rendezvous().withdrawAddresses(node.id());
    }

    /** The network namespace of another live process of the host that has {@code a}, or -1. */
    long namespaceOf(InetAddress a) {
        return node.rendezvous().namespaceOf(a);
    }

    /** Whether the peer {@code from} published {@code a} as an address of its namespace. */
    boolean publishes(NodeId from, InetAddress a) {
        return node.rendezvous().publishes(from, a);
    }

    InJvmFabric fabric() {
        return fabric;
    }

    // ------------------------------------------------------------------ port space

    /**
     * Claims {@code port} host-wide for this process; the caller holds it in this JVM already.
     *
     * @return true when claimed, false when another live process holds it
     * @throws VerbsException (EIO) when the rendezvous entry cannot be written
     */
    boolean claimPort(int port) throws VerbsException {
        try {
            boolean claimed = node.rendezvous().claimListener(port, node.id());
            if (!claimed) {
                SoftCmId.TRACE.record(TraceLevel.RARE, "cm.portHeldElsewhere", port);
            }
            return claimed;
        } catch (IOException e) {
            throw new VerbsException(Errno.EIO, "cannot claim RDMA CM port " + port + " host-wide: " + e.getMessage());
        }
    }

    /** Gives up a port {@link #claimPort} claimed. */
    void releasePort(int port) {
        node.rendezvous().releaseListener(port, node.id());
    }

    /** The live process holding {@code port} (possibly this one), or null. */
    NodeId liveOwner(int port) {
        return liveOwner(Rendezvous.NETNS, port);
    }

    /** The live process holding {@code port} in network namespace {@code netns} (possibly this one), or null. */
    NodeId liveOwner(long netns, int port) {
        NodeId owner = node.rendezvous().listenerOwner(netns, port);
        if (owner == null || owner.equals(node.id())) {
            return owner;
        }
        return node.rendezvous().isAlive(owner) ? owner : null;
    }

    // ------------------------------------------------------------------ ids

    /** Registers an active id; returns its handle. Holds cmLock. */
    long register(SoftCmId id) {
        long h = HANDLES.incrementAndGet();
        ids.put(h, id);
        return h;
    }

    /** Registers a passive id made for the REQ of {@code activeNode}'s id {@code activeHandle}. Holds cmLock. */
    long registerRequest(SoftCmId id, NodeId activeNode, long activeHandle) {
        long h = register(id);
        requests.put(new PeerRef(activeNode, activeHandle), id);
        return h;
    }

    /** Forgets a closed id. Holds cmLock. */
    void unregister(SoftCmId id, long handle, NodeId peerNode, long peerHandle) {
        ids.remove(handle, id);
        if (peerNode != null) {
            requests.remove(new PeerRef(peerNode, peerHandle), id);
        }
    }

    /** Ids registered (tests: none may stay behind their close). */
    int registeredIds() {
        fabric.cmLock.lock();
        try {
            return ids.size() + requests.size();
        } finally {
            fabric.cmLock.unlock();
        }
    }

    /** Connection-manager messages this node sent (to peers or to itself). */
    long messagesSent() {
        fabric.cmLock.lock();
        try {
            return sent;
        } finally {
            fabric.cmLock.unlock();
        }
    }

    /** Connection-manager messages this node received (from peers or from itself). */
    long messagesReceived() {
        fabric.cmLock.lock();
        try {
            return received;
        } finally {
            fabric.cmLock.unlock();
        }
    }

    /**
     * Sends a message to {@code target}'s connection manager.
     *
     * @return true when sent, false when the peer (or this node) is gone
     */
    boolean send(NodeId target, ByteBuffer message) {
        int type = message.get(CmMessage.TYPE_OFFSET);
        int status = node.sendMessage(target, MESSAGE_KIND, message);
        if (status != ShmNode.SENT) {
            SoftCmId.TRACE.record(TraceLevel.RARE, "cm.sendFailed", type, status, target.pid());
            return false;
        }
        sent++;
        if (SoftCmId.TRACE.on(TraceLevel.ENTRY_EXIT)) {
            SoftCmId.TRACE.record(TraceLevel.ENTRY_EXIT, "cm.send", type, target.pid());
        }
        return true;
    }

    // ------------------------------------------------------------------ node thread

    /** A message from {@code from} (node thread). */
    private void onMessage(NodeId from, ByteBuffer payload) {
        fabric.cmLock.lock();
        try {
            received++;
            String malformed = in.wrap(payload);
            if (malformed != null) {
                // A peer of this user that speaks the protocol wrongly: drop the message, say so once.
                SoftCmId.TRACE.message(TraceLevel.ERROR, "cm.malformedMessage", malformed + " from " + from + "; dropped");
                return;
            }
            if (SoftCmId.TRACE.on(TraceLevel.ENTRY_EXIT)) {
                SoftCmId.TRACE.record(TraceLevel.ENTRY_EXIT, "cm.receive", in.type(), from.pid(), in.to());
            }
            if (in.type() == CmMessage.REQ) {
                SoftCmId.onRequest(this, from, in);
                return;
            }
            SoftCmId id = find(from, in.to(), in.from());
            if (id != null) {
                id.onMessage(in);
            } else if (in.type() == CmMessage.REP) {
                // The active id is closed: no RTU will come; say so, as its close would have (the passive
                // side ignores a second REJ).
                send(from, CmMessage.rej(in.from(), in.to(), -Errno.ETIMEDOUT, null));
            } else {
                SoftCmId.TRACE.record(TraceLevel.INTERNALS, "cm.unknownId", in.type(), in.to());
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    private SoftCmId find(NodeId from, long to, long fromHandle) {
        if (to == 0) {
            return requests.get(new PeerRef(from, fromHandle));
        }
        SoftCmId id = ids.get(to);
        return id != null && id.isPeer(from, fromHandle) ? id : null;
    }

    /** A peer process left the fabric (node thread): every id whose other end it held hears of it. */
    @Override
    public void onPeerGone(NodeId peer) {
        fabric.cmLock.lock();
        try {
            List<SoftCmId> tied = new ArrayList<>();
            for (SoftCmId id : ids.values()) {
                if (id.isPeer(peer)) {
                    tied.add(id);
                }
            }
            if (!tied.isEmpty()) {
                SoftCmId.TRACE.message(TraceLevel.RARE, "cm.peerGone", tied.size() + " CM id(s) lose their peer "
                    + peer);
            }
            for (SoftCmId id : tied) {
                id.onPeerGone();
            }
        } finally {
            fabric.cmLock.unlock();
        }
    }

    @Override
    public String toString() {
        return "HostCm[" + node.id().token() + "]";
    }
}
