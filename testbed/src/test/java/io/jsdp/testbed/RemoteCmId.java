package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** A connection-manager id of a {@link RemoteDevice}. */
final class RemoteCmId implements CmId, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;
    private final RemoteCmEventChannel channel;

    RemoteCmId(RemoteDevice device, int handle, RemoteCmEventChannel channel) {
        this.device = device;
        this.handle = handle;
        this.channel = channel;
    }

    /**
     * Reads an id reference (handle and the handle of its event channel, or handle 0 for none) and
     * gives its one proxy, made on first sight.
     *
     * @param r the result
     * @param peer the peer
     * @return the proxy, or null
     */
    static RemoteCmId read(ByteBuffer r, RemotePeer peer) {
        int handle = r.getInt();
        if (handle == 0) {
            return null;
        }
        RemoteCmEventChannel ch = peer.known(r.getInt(), RemoteCmEventChannel.class);
        return peer.proxy(handle, RemoteCmId.class, h -> new RemoteCmId(ch.owner(), h, ch));
    }

    @Override
    public int handle() {
        return handle;
    }

    @Override
    public RemoteDevice owner() {
        return device;
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public CmEventChannel channel() {
        return channel;
    }

    @Override
    public void bind(InetSocketAddress address) throws VerbsException {
        device.peer().call(Op.ID_BIND, handle, out -> RemoteProtocol.putAddress(out, address));
    }

    @Override
    public void listen(int backlog) throws VerbsException {
        device.peer().call(Op.ID_LISTEN, handle, out -> out.putInt(backlog));
    }

    @Override
    public void resolveAddress(InetSocketAddress destination, int timeoutMs) throws VerbsException {
        device.peer().call(Op.ID_RESOLVE_ADDRESS, handle,
            out -> RemoteProtocol.putAddress(out, destination).putInt(timeoutMs));
    }

    @Override
    public void resolveRoute(int timeoutMs) throws VerbsException {
        device.peer().call(Op.ID_RESOLVE_ROUTE, handle, out -> out.putInt(timeoutMs));
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, QueuePairAttributes attributes) throws VerbsException {
        RemotePeer peer = device.peer();
        int p = peer.handleOf(pd, RemoteProtectionDomain.class, device, "protection domain");
        int sendCq = peer.handleOf(attributes.sendCq(), RemoteCompletionQueue.class, device, "send completion queue");
        int recvCq = peer.handleOf(attributes.recvCq(), RemoteCompletionQueue.class, device, "receive completion queue");
        ByteBuffer r = peer.call(Op.ID_CREATE_QP, handle, out -> {
            out.putInt(p).putInt(sendCq).putInt(recvCq);
            RemoteProtocol.putAttributes(out, attributes);
        });
        return RemoteQueuePair.read(r, device);
    }

    @Override
    public QueuePair queuePair() {
        return RemoteQueuePair.read(device.peer().invoke(Op.ID_QUEUE_PAIR, handle, RemotePeer.NONE), device);
    }

    @Override
    public void connect(ConnectionParameters parameters) throws VerbsException {
        device.peer().call(Op.ID_CONNECT, handle, out -> RemoteProtocol.putParameters(out, parameters));
    }

    @Override
    public void accept(ConnectionParameters parameters) throws VerbsException {
        device.peer().call(Op.ID_ACCEPT, handle, out -> RemoteProtocol.putParameters(out, parameters));
    }

    @Override
    public void reject(byte[] privateData) throws VerbsException {
        device.peer().call(Op.ID_REJECT, handle, out -> out.putBytes(privateData));
    }

    @Override
    public void disconnect() throws VerbsException {
        device.peer().call(Op.ID_DISCONNECT, handle, RemotePeer.NONE);
    }

    @Override
    public InetSocketAddress localAddress() {
        return RemoteProtocol.getAddress(device.peer().invoke(Op.ID_LOCAL_ADDRESS, handle, RemotePeer.NONE));
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return RemoteProtocol.getAddress(device.peer().invoke(Op.ID_REMOTE_ADDRESS, handle, RemotePeer.NONE));
    }

    @Override
    public void close() {
        device.peer().closeQuietly(Op.ID_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteCmId[" + handle + " on " + device + "]";
    }
}
