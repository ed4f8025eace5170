package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A protection domain. DiSNI marks a PD closed before it asks the device to deallocate it, so a refused
 * dealloc (regions or queue pairs left) would leave a dead handle: the adapter counts the domain's users
 * and refuses with EBUSY before DiSNI is asked.
 */
final class DisniProtectionDomain implements ProtectionDomain, DisniObject {
    final DisniDevice device;
    final IbvPd pd;
    private final Tracked tracked;
    /** Open regions and queue pairs of the domain. */
    final AtomicInteger users = new AtomicInteger();
    private volatile boolean closed;

    DisniProtectionDomain(DisniDevice device, IbvPd pd) {
        this.device = device;
        this.pd = pd;
        this.tracked = device.resources().track(this, "PD", "PD on " + device.name());
        device.register(this);
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException {
        device.ensureOpen();
        if (closed) {
            throw new VerbsException(Errno.EINVAL, this + " is closed");
        }
        if (buffer == null || !buffer.isDirect()) {
            // DiSNI would fail with a ClassCastException: it takes the address from sun.nio.ch.DirectBuffer
            throw new VerbsException(Errno.EINVAL, "only direct buffers can be registered");
        }
        if (Access.validate(access) != Errno.OK) {
            throw new VerbsException(Errno.EINVAL, "invalid access flags " + Access.toString(access)
                + " (remote write or atomic needs LOCAL_WRITE)");
        }
        IbvMr mr;
        try {
            SVCRegMr call = device.verbs.regMr(pd, buffer, access);
            try {
                mr = call.execute().getMr();
            } finally {
                call.free();
            }
        } catch (IOException e) {
            throw DisniDevice.failure("register " + buffer.capacity() + " bytes", e);
        }
        return new DisniMemoryRegion(this, mr, buffer, access);
    }

    @Override
    public void close() throws VerbsException {
        if (closed) {
            return;
        }
        int n = users.get();
        if (n > 0) {
            throw new VerbsException(Errno.EBUSY, this + " still has " + n + " memory region(s) or queue pair(s)");
        }
        int rc = release();
        if (rc != 0) {
            throw new VerbsException(rc, "DiSNI could not deallocate " + this);
        }
    }

    private synchronized int release() {
        if (closed) {
            return 0;
        }
        closed = true;
        int rc;
        try {
            rc = device.verbs.deallocPd(pd);
        } catch (IOException e) {
            rc = DisniStatus.errno(e);
        }
        device.unregister(this);
        tracked.release();
        return rc;
    }

    @Override
    public int closeOrder() {
        return 6;
    }

    @Override
    public void forceClose() {
        release();
    }

    @Override
    public String toString() {
        return "PD on " + device.name();
    }
}
