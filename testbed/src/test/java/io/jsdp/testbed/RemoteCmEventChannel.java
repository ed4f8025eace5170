package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.VerbsException;
import java.nio.ByteBuffer;

/**
 * A connection-manager event channel of a {@link RemoteDevice}; {@link #poll} waits in the peer. The
 * ids an event names are given as their one proxy each, made on first sight (the new id of a
 * connect request), so identity checks on events hold as on the device itself.
 */
final class RemoteCmEventChannel implements CmEventChannel, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;

    RemoteCmEventChannel(RemoteDevice device, int handle) {
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
    public CmEvent poll(long timeoutNs) throws InterruptedException, VerbsException {
        ByteBuffer r = device.peer().callInterruptibly(Op.EVENTS_POLL, handle, out -> out.putLong(timeoutNs));
        if (!RemoteProtocol.getBoolean(r)) {
            return null;
        }
        CmEventType type = CmEventType.values()[r.get()];
        RemoteCmId id = RemoteCmId.read(r, device.peer());
        RemoteCmId listenId = RemoteCmId.read(r, device.peer());
        int status = r.getInt();
        return new CmEvent(type, id, listenId, status, RemoteProtocol.getBytes(r));
    }

    @Override
    public void close() throws VerbsException {
        device.peer().close(Op.EVENTS_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteCmEventChannel[" + handle + " on " + device + "]";
    }
}
