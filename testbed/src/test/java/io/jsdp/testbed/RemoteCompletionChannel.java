package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.VerbsException;

/** A completion channel of a {@link RemoteDevice}; {@link #await} waits in the peer. */
final class RemoteCompletionChannel implements CompletionChannel, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;

    RemoteCompletionChannel(RemoteDevice device, int handle) {
        this.device = device;
        this.handle = handle;
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
    public CompletionQueue await(long timeoutNs) throws InterruptedException, VerbsException {
        int cq = device.peer().callInterruptibly(Op.CHANNEL_AWAIT, handle, out -> out.putLong(timeoutNs)).getInt();
        return cq == 0 ? null : device.peer().known(cq, RemoteCompletionQueue.class);
    }

    @Override
    public void close() throws VerbsException {
        device.peer().close(Op.CHANNEL_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteCompletionChannel[" + handle + " on " + device + "]";
    }
}
