package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.DeviceMemory;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import io.jsdp.testbed.shm.SharedSegment;
import java.nio.ByteBuffer;

/**
 * Device memory: on the in-JVM fabric a 64-byte aligned direct buffer, which every device in this JVM
 * reaches; on the host fabric a shared-memory segment of its own, which peer processes map to reach
 * it with one-sided RDMA READ and WRITE.
 */
final class SoftDeviceMemory implements DeviceMemory, SoftDevice.SoftObject {
    private static final int ALIGNMENT = 64;
    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(SoftDeviceMemory.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SoftDevice device;
    private final ByteBuffer buffer;
    /** The segment holding the memory on the host fabric, else null. */
    private final SharedSegment segment;
    private final Tracked tracked;
    /** Set once, by compare-and-set: of racing closes exactly one releases the memory. */
    private volatile boolean closed;

    SoftDeviceMemory(SoftDevice device, int bytes) {
        this.device = device;
        // alignedSlice rounds both ends to the alignment, so the raw block must hold a whole number of units
        ByteBuffer raw = ByteBuffer.allocateDirect((bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT + ALIGNMENT);
        ByteBuffer aligned = raw.alignedSlice(ALIGNMENT);
        this.buffer = aligned.limit(bytes).slice();
        this.segment = null;
        this.tracked = device.resources().track(this, "DEVICE_MEMORY", bytes + "B device memory on " + device.name());
        device.register(this);
    }

    SoftDeviceMemory(SoftDevice device, SharedSegment segment) {
        this.device = device;
        this.segment = segment;
        this.buffer = segment.buffer();
        this.tracked = device.resources().track(this, "DEVICE_MEMORY", buffer.capacity() + "B shared device memory "
            + segment.name() + " on " + device.name());
        device.register(this);
        device.deviceMemory.put(buffer, this);
    }

    /**
     * The shared-memory segment of this memory, or null on the in-JVM fabric.
     *
     * @return the segment
     */
    SharedSegment segment() {
        return segment;
    }

    @Override
    public ByteBuffer buffer() {
        return buffer;
    }

    @Override
    public int size() {
        return buffer.capacity();
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
        device.unregister(this);
        if (segment != null) {
            device.deviceMemory.remove(buffer);
            device.host().node().deleteSegment(segment);
        }
        tracked.release();
    }
}
