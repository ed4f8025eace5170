package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import java.nio.ByteBuffer;

/** A memory region of a {@link RemoteDevice}: its keys and address are the peer's, fixed at registration. */
final class RemoteMemoryRegion implements MemoryRegion, RemotePeer.Proxy {
    private final RemoteProtectionDomain pd;
    private final int handle;
    private final long address;
    private final int length;
    private final int lkey;
    private final int rkey;
    private final int access;
    private final ByteBuffer buffer;

    RemoteMemoryRegion(RemoteProtectionDomain pd, int handle, long address, int length, int lkey, int rkey, int access,
                       ByteBuffer buffer) {
        this.pd = pd;
        this.handle = handle;
        this.address = address;
        this.length = length;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
        this.buffer = buffer;
    }

    @Override
    public int handle() {
        return handle;
    }

    @Override
    public RemoteDevice owner() {
        return pd.owner();
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public ByteBuffer buffer() {
        return buffer;
    }

    @Override
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    public void close() {
        owner().peer().closeQuietly(Op.MR_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteMemoryRegion[" + handle + ", rkey 0x" + Integer.toHexString(rkey) + " on " + owner() + "]";
    }
}
