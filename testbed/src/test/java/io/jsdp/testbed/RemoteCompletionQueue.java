package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;

/** A completion queue of a {@link RemoteDevice}: each poll is one call to the peer. */
final class RemoteCompletionQueue implements CompletionQueue, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;
    private final int capacity;
    private final RemoteCompletionChannel channel;

    RemoteCompletionQueue(RemoteDevice device, int handle, int capacity, RemoteCompletionChannel channel) {
        this.device = device;
        this.handle = handle;
        this.capacity = capacity;
        this.channel = channel;
    }

    @Override
    public int handle() {
        return handle;
    }

    @Override
    public RemoteDevice owner() {
        return device;
    }

    /** Polls in the peer with an array as long as {@code completions}, and copies what it took. */
    @Override
    public int poll(WorkCompletion[] completions, int max) {
        ByteBuffer r = device.peer().invoke(Op.CQ_POLL, handle, out -> out.putInt(completions.length).putInt(max));
        int n = r.getInt();
        for (int i = 0; i < n; i++) {
            RemoteProtocol.getCompletion(r, completions[i]);
        }
        return n;
    }

    @Override
    public int requestNotify(boolean solicitedOnly) {
        return device.peer().invoke(Op.CQ_REQUEST_NOTIFY, handle, out -> out.putBoolean(solicitedOnly)).getInt();
    }

    @Override
    public void acknowledgeEvents(int count) {
        device.peer().invoke(Op.CQ_ACKNOWLEDGE, handle, out -> out.putInt(count));
    }

    @Override
    public int capacity() {
        return capacity;
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    @Override
    public void close() throws VerbsException {
        device.peer().close(Op.CQ_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteCompletionQueue[" + handle + " on " + device + "]";
    }
}
