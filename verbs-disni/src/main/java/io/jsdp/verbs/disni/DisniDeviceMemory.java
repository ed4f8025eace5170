package io.jsdp.verbs.disni;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.DeviceMemory;
import java.nio.ByteBuffer;

/** Device memory on hardware: a direct buffer, which the adapter reaches once it is registered. */
final class DisniDeviceMemory implements DeviceMemory, DisniObject {
    private final DisniDevice device;
    private final ByteBuffer buffer;
    private final Tracked tracked;
    private volatile boolean closed;

    DisniDeviceMemory(DisniDevice device, int bytes) {
        this.device = device;
        this.buffer = ByteBuffer.allocateDirect(bytes);
        this.tracked = device.resources().track(this, "memory", bytes + " bytes of device memory on " + device.name());
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
    public int closeOrder() {
        return 7;
    }

    @Override
    public synchronized void forceClose() {
        if (closed) {
            return;
        }
        closed = true;
        device.unregister(this);
        tracked.release();
    }
}
