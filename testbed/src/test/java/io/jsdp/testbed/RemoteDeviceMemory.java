package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.DeviceMemory;
import java.nio.MappedByteBuffer;

/**
 * Device memory of a {@link RemoteDevice}: a shared-memory segment the peer allocated, mapped here, so
 * this JVM reads and writes the very bytes the peer's device moves.
 */
final class RemoteDeviceMemory implements DeviceMemory, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;
    private final MappedByteBuffer mapping;

    RemoteDeviceMemory(RemoteDevice device, int handle, MappedByteBuffer mapping) {
        this.device = device;
        this.handle = handle;
        this.mapping = mapping;
    }

    @Override
    public int handle() {
        return handle;
    }

    @Override
    public RemoteDevice owner() {
        return device;
    }

    /**
     * This JVM's mapping of the peer's segment; the one buffer a proxy domain registers as this memory.
     *
     * @return the mapping
     */
    @Override
    public MappedByteBuffer buffer() {
        return mapping;
    }

    @Override
    public int size() {
        return mapping.capacity();
    }

    /** Frees the memory in the peer; the mapping here stays valid until it is collected, as a peer's does. */
    @Override
    public void close() {
        device.peer().removeMemory(this);
        device.peer().closeQuietly(Op.MEMORY_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteDeviceMemory[" + handle + ", " + size() + "B on " + device + "]";
    }
}
