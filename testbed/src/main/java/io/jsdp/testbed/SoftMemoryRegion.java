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

    /**
     * Makes the region's rkey resolvable by other processes (host fabric, remote access): in the
     * device's shared key table, with the device-memory segment it lies in (none for other memory,
     * which peers are then refused). Called once the key is published in the device's own table.
     */
    void publishRemote() {
        SoftDevice d = pd.softDevice();
        XpEngine xp = d.xp();
        if (xp == null || (access & (Access.REMOTE_READ | Access.REMOTE_WRITE)) == 0) {
            return;
        }
        SoftDeviceMemory dm = d.deviceMemory.get(buffer);
        long segment = dm == null || dm.segment() == null ? 0 : XpEngine.numberOf(dm.segment());
        if (!xp.keys.publish(key, access, pd.number(), length, segment, 0)) {
            SoftDevice.TRACE.message(io.jsdp.ras.TraceLevel.RARE, "device.keyNotShared", describe()
                + ": its key index is beyond the shared key table (" + KeyTable.ENTRIES + "); other processes cannot reach it");
        }
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
        XpEngine xp = pd.softDevice().xp();
        if (xp != null) {
            xp.keys.revoke(key);
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
