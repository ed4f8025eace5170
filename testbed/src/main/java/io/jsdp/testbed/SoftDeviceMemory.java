package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.DeviceMemory;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * Device memory of the in-JVM fabric: a 64-byte aligned direct buffer, which every device in this JVM
 * reaches. (The cross-process fabric hands out shared-memory segments instead.)
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
    private final Tracked tracked;
    /** Set once, by compare-and-set: of racing closes exactly one releases the memory. */
    private volatile boolean closed;

    SoftDeviceMemory(SoftDevice device, int bytes) {
        this.device = device;
        ByteBuffer raw = ByteBuffer.allocateDirect(bytes + ALIGNMENT);
        ByteBuffer aligned = raw.alignedSlice(ALIGNMENT);
        this.buffer = aligned.limit(bytes).slice();
        this.tracked = device.resources().track(this, "DEVICE_MEMORY", bytes + "B device memory on " + device.name());
        device.register(this);
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
        tracked.release();
    }
}
