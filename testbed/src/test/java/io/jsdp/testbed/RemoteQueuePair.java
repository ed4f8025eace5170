package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import java.nio.ByteBuffer;

/**
 * A queue pair of a {@link RemoteDevice}. A post sends every field of the request to the peer, so the
 * request is snapshot at post time as the port requires.
 */
final class RemoteQueuePair implements QueuePair, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;
    private final int qpNumber;
    private final RemoteProtectionDomain pd;

    RemoteQueuePair(RemoteDevice device, int handle, int qpNumber, RemoteProtectionDomain pd) {
        this.device = device;
        this.handle = handle;
        this.qpNumber = qpNumber;
        this.pd = pd;
    }

    /**
     * Reads a queue-pair reference (handle, number, domain handle, or handle 0 for none) and gives its
     * one proxy.
     *
     * @param r the result
     * @param device the device of the queue pair
     * @return the proxy, or null
     */
    static RemoteQueuePair read(ByteBuffer r, RemoteDevice device) {
        int handle = r.getInt();
        if (handle == 0) {
            return null;
        }
        int qpNumber = r.getInt();
        RemoteProtectionDomain pd = device.peer().known(r.getInt(), RemoteProtectionDomain.class);
        return device.peer().proxy(handle, RemoteQueuePair.class, h -> new RemoteQueuePair(device, h, qpNumber, pd));
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
    public int qpNumber() {
        return qpNumber;
    }

    @Override
    public QpState state() {
        return QpState.values()[device.peer().invoke(Op.QP_STATE, handle, RemotePeer.NONE).get()];
    }

    @Override
    public int postSend(SendWorkRequest request) {
        return device.peer().invoke(Op.QP_POST_SEND, handle, out -> RemoteProtocol.putSend(out, request)).getInt();
    }

    @Override
    public int postRecv(ReceiveWorkRequest request) {
        return device.peer().invoke(Op.QP_POST_RECV, handle, out -> RemoteProtocol.putRecv(out, request)).getInt();
    }

    @Override
    public void modify(QpState target) throws VerbsException {
        device.peer().call(Op.QP_MODIFY, handle, out -> out.putByte(target.ordinal()));
    }

    @Override
    public QueuePairAttributes attributes() {
        ByteBuffer r = device.peer().invoke(Op.QP_ATTRIBUTES, handle, RemotePeer.NONE);
        int sendCq = r.getInt();
        int recvCq = r.getInt();
        return RemoteProtocol.getAttributes(r).sendCq(cq(sendCq)).recvCq(cq(recvCq));
    }

    private RemoteCompletionQueue cq(int h) {
        return h == 0 ? null : device.peer().known(h, RemoteCompletionQueue.class);
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public void close() {
        device.peer().closeQuietly(Op.QP_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteQueuePair[" + qpNumber + " on " + device + "]";
    }
}
