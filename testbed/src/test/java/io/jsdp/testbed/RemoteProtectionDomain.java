package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.nio.ByteBuffer;

/** A protection domain of a {@link RemoteDevice}. */
final class RemoteProtectionDomain implements ProtectionDomain, RemotePeer.Proxy {
    private final RemoteDevice device;
    private final int handle;

    RemoteProtectionDomain(RemoteDevice device, int handle) {
        this.device = device;
        this.handle = handle;
    }

    @Override
    public int handle() {
        return handle;
    }

    @Override
    public RemoteDevice owner() {
        return device;
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    /**
     * Registers device memory of the peer. A heap buffer (or null) goes to the peer as "no memory", so
     * the peer's device refuses it as it refuses any heap buffer.
     *
     * @param buffer the {@linkplain RemoteDeviceMemory#buffer() buffer} of device memory of this peer
     * @param access the access flags
     * @return the region, whose buffer is {@code buffer}
     * @throws VerbsException as the peer's device throws it
     * @throws IllegalArgumentException for a direct buffer that is not device memory of this peer,
     *     which the peer cannot reach
     */
    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException {
        RemoteDeviceMemory memory = null;
        if (buffer != null && buffer.isDirect()) {
            memory = device.peer().memoryOf(buffer);
            if (memory == null) {
                throw new IllegalArgumentException("a region of " + device + " must be device memory of peer JVM "
                    + device.peer().pid() + " (its allocateMemory buffer, not a slice or duplicate): the peer "
                    + "cannot reach other memory of this JVM");
            }
        }
        int m = memory == null ? 0 : memory.handle();
        ByteBuffer r = device.peer().call(Op.PD_REGISTER, handle, out -> out.putInt(m).putInt(access));
        RemoteMemoryRegion mr = new RemoteMemoryRegion(this, r.getInt(), r.getLong(), r.getInt(), r.getInt(), r.getInt(),
            r.getInt(), buffer);
        device.peer().add(mr);
        return mr;
    }

    @Override
    public void close() throws VerbsException {
        device.peer().close(Op.PD_CLOSE, this);
    }

    @Override
    public String toString() {
        return "RemoteProtectionDomain[" + handle + " on " + device + "]";
    }
}
