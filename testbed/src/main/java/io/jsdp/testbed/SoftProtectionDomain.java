package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/** A SoftRdma protection domain. */
final class SoftProtectionDomain implements ProtectionDomain, SoftDevice.SoftObject {
    private static final AtomicInteger NUMBERS = new AtomicInteger(1);
    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(SoftProtectionDomain.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SoftDevice device;
    private final int number = NUMBERS.getAndIncrement();
    private final Tracked tracked;
    /** Open regions and queue pairs of this domain; close() refuses while any is open. */
    final AtomicInteger users = new AtomicInteger();
    /** Set once, by compare-and-set: of racing closes exactly one releases the domain. */
    private volatile boolean closed;

    SoftProtectionDomain(SoftDevice device) {
        this.device = device;
        this.tracked = device.resources().track(this, "PD", "PD " + number + " on " + device.name());
        device.register(this);
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    SoftDevice softDevice() {
        return device;
    }

    /** The domain's number, unique in this process: what remote keys are checked against across processes. */
    int number() {
        return number;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException {
        device.ensureOpen();
        if (closed) {
            throw new VerbsException(Errno.EINVAL, this + " is closed");
        }
        if (buffer == null || !buffer.isDirect()) {
            throw new VerbsException(Errno.EINVAL, "only direct buffers can be registered (the device must "
                + "reach memory the garbage collector does not move)");
        }
        if (Access.validate(access) != Errno.OK) {
            throw new VerbsException(Errno.EINVAL, "invalid access flags " + Access.toString(access)
                + " (remote write or atomic needs LOCAL_WRITE)");
        }
        if (buffer.capacity() == 0) {
            throw new VerbsException(Errno.EINVAL, "cannot register an empty buffer");
        }
        int key = device.memoryRegions.reserveKey();
        if (key < 0) {
            throw new VerbsException(Errno.ENOMEM, "device " + device.name() + " has no memory keys left");
        }
        SoftMemoryRegion mr = new SoftMemoryRegion(this, buffer, access, key);
        device.memoryRegions.publish(mr);
        mr.publishRemote();
        return mr;
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
        forceClose();
    }

    @Override
    public void forceClose() {
        if (!CLOSED.compareAndSet(this, false, true)) {
            return;
        }
        device.unregister(this);
        tracked.release();
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "PD " + number + " on " + device.name();
    }
}
