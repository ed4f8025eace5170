package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.SVCDeregMr;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import java.io.IOException;
import java.nio.ByteBuffer;

/** A registered region: DiSNI's {@code IbvMr} with the buffer it covers. */
final class DisniMemoryRegion implements MemoryRegion, DisniObject {
    private final DisniProtectionDomain pd;
    private final IbvMr mr;
    private final ByteBuffer buffer;
    /** DiSNI's IbvMr has no getter for its access flags. */
    private final int access;
    private final Tracked tracked;
    private volatile boolean closed;

    DisniMemoryRegion(DisniProtectionDomain pd, IbvMr mr, ByteBuffer buffer, int access) {
        this.pd = pd;
        this.mr = mr;
        this.buffer = buffer;
        this.access = access;
        this.tracked = pd.device.resources().track(this, "MR", this.toString());
        pd.users.incrementAndGet();
        pd.device.register(this);
    }

    @Override
    public long address() {
        return mr.getAddr();
    }

    @Override
    public int length() {
        return mr.getLength();
    }

    @Override
    public int lkey() {
        return mr.getLkey();
    }

    @Override
    public int rkey() {
        return mr.getRkey();
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
        forceClose();
    }

    @Override
    public int closeOrder() {
        return 2;
    }

    @Override
    public synchronized void forceClose() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            SVCDeregMr call = pd.device.verbs.deregMr(mr);
            try {
                call.execute();
            } finally {
                call.free();
            }
        } catch (IOException e) {
            DisniDevice.TRACE.record(1, "mr.deregFailed", e);
        }
        pd.users.decrementAndGet();
        pd.device.unregister(this);
        tracked.release();
    }

    @Override
    public String toString() {
        return "MR " + Integer.toHexString(mr.getLkey()) + " (" + mr.getLength() + " bytes) on " + pd.device.name();
    }
}
