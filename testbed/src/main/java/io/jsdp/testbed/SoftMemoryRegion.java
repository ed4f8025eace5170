package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * A SoftRdma memory region. lkey and rkey are the same key; the device address of byte 0 is derived
 * from the key's slot ({@link MemoryRegionTable}). The device copies into and out of {@link #buffer}
 * with absolute bulk operations, which never touch the buffer's position or limit.
 */
final class SoftMemoryRegion implements MemoryRegion, SoftDevice.SoftObject {
    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(SoftMemoryRegion.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SoftProtectionDomain pd;
    private final ByteBuffer buffer;
    private final int access;
    private final int key;
    private final long address;
    private final int length;
    private final Tracked tracked;
    /**
     * Set once by close with a compare-and-set, so of two racing closes (the application's and the
     * device's) exactly one releases the region; read by the data path before every use (deregistration
     * is immediate).
     */
    private volatile boolean closed;

    SoftMemoryRegion(SoftProtectionDomain pd, ByteBuffer buffer, int access, int key) {
        this.pd = pd;
        this.buffer = buffer;
        this.access = access;
        this.key = key;
        this.address = MemoryRegionTable.addressOf(key);
        this.length = buffer.capacity();
        pd.users.incrementAndGet();
        this.tracked = pd.softDevice().resources().track(this, "MR", describe());
        pd.softDevice().register(this);
    }

    private String describe() {
        return "MR key=0x" + Integer.toHexString(key) + " " + length + "B " + Access.toString(access)
            + " on " + pd.softDevice().name();
    }

    int key() {
        return key;
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    boolean isClosed() {
        return closed;
    }

    /** Whether {@code [addr, addr + len)} lies inside the region. */
    boolean contains(long addr, long len) {
        long offset = addr - address;
        return offset >= 0 && len >= 0 && offset + len <= length;
    }

    int offsetOf(long addr) {
        return (int) (addr - address);
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
        return key;
    }

    @Override
    public int rkey() {
        return key;
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
    public void forceClose() {
        if (!CLOSED.compareAndSet(this, false, true)) {
            return;
        }
        pd.softDevice().memoryRegions.remove(this);
        pd.users.decrementAndGet();
        pd.softDevice().unregister(this);
        tracked.release();
    }

    @Override
    public String toString() {
        return describe();
    }
}
