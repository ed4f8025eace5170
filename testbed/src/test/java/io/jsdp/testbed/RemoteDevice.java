package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.DeviceCapabilities;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A SoftRdma device in a peer JVM ({@link RemotePeer#openDevice()}), seen through the port: every call
 * of it and of its objects runs in the peer. Test code only: it lets the conformance suites drive a
 * side of a connection that lives in another process.
 *
 * <p>Where a proxy cannot be the device itself:
 * <ul>
 *   <li>Memory: only device memory ({@link #allocateMemory}) can be registered. The peer allocates
 *       it on the host fabric, a shared-memory segment, which this JVM maps, so
 *       {@link DeviceMemory#buffer()} and {@link io.jsdp.verbs.MemoryRegion#buffer()} here see the
 *       peer's bytes. Registering any other direct buffer throws {@link IllegalArgumentException}.</li>
 *   <li>Resources: the tracker lives in the peer; {@link #resources()} throws and
 *       {@link #openResources()} asks the peer.</li>
 *   <li>Faults: {@link #faults()} forwards the knobs the suites use.</li>
 *   <li>After the device closes, the peer forgets its objects: closing them again does nothing (as
 *       on SoftRdma), any other call throws {@link IllegalStateException}.</li>
 * </ul>
 */
final class RemoteDevice implements RdmaDevice, RemotePeer.Proxy {
    private final RemotePeer peer;
    private final int handle;
    private final String name;
    private final String provider;
    private final DeviceCapabilities capabilities;
    private final AtomicBoolean open = new AtomicBoolean(true);

    RemoteDevice(RemotePeer peer, int handle, String name, String provider, DeviceCapabilities capabilities) {
        this.peer = peer;
        this.handle = handle;
        this.name = name;
        this.provider = provider;
        this.capabilities = capabilities;
    }

    @Override
    public int handle() {
        return handle;
    }

    @Override
    public RemoteDevice owner() {
        return this;
    }

    RemotePeer peer() {
        return peer;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String provider() {
        return provider;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() throws VerbsException {
        ensureOpen();
        RemoteProtectionDomain pd = new RemoteProtectionDomain(this, peer.call(Op.ALLOCATE_PD, handle,
            RemotePeer.NONE).getInt());
        peer.add(pd);
        return pd;
    }

    @Override
    public CompletionChannel createCompletionChannel() throws VerbsException {
        ensureOpen();
        RemoteCompletionChannel ch = new RemoteCompletionChannel(this, peer.call(Op.CREATE_COMPLETION_CHANNEL, handle,
            RemotePeer.NONE).getInt());
        peer.add(ch);
        return ch;
    }

    @Override
    public CompletionQueue createCompletionQueue(CompletionChannel channel, int entries) throws VerbsException {
        ensureOpen();
        int ch = peer.handleOf(channel, RemoteCompletionChannel.class, this, "completion channel");
        ByteBuffer r = peer.call(Op.CREATE_CQ, handle, out -> out.putInt(ch).putInt(entries));
        RemoteCompletionQueue cq = new RemoteCompletionQueue(this, r.getInt(), r.getInt(),
            (RemoteCompletionChannel) channel);
        peer.add(cq);
        return cq;
    }

    /**
     * Allocates device memory in the peer and maps its shared-memory segment here.
     *
     * @param bytes the size
     * @return the memory, whose buffer is this JVM's mapping of the peer's segment
     * @throws VerbsException as the peer's device throws it, or {@link Errno#ENOMEM} when the segment
     *     cannot be mapped here
     */
    @Override
    public DeviceMemory allocateMemory(int bytes) throws VerbsException {
        ensureOpen();
        ByteBuffer r = peer.call(Op.ALLOCATE_MEMORY, handle, out -> out.putInt(bytes));
        int memory = r.getInt();
        int size = r.getInt();
        String path = RemoteProtocol.getString(r);
        MappedByteBuffer mapping;
        try {
            if (path == null) {
                throw new IOException("the peer's device memory is not shared memory (not on the host fabric)");
            }
            try (FileChannel f = FileChannel.open(Path.of(path), StandardOpenOption.READ, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                mapping = f.map(FileChannel.MapMode.READ_WRITE, 0, size);
            }
        } catch (IOException e) {
            peer.call(Op.MEMORY_CLOSE, memory, RemotePeer.NONE);
            throw new VerbsException(Errno.ENOMEM, "cannot map the peer's device memory " + path + ": " + e);
        }
        RemoteDeviceMemory m = new RemoteDeviceMemory(this, memory, mapping);
        peer.add(m);
        peer.addMemory(m);
        return m;
    }

    @Override
    public CmEventChannel createEventChannel() throws VerbsException {
        ensureOpen();
        RemoteCmEventChannel ch = new RemoteCmEventChannel(this, peer.call(Op.CREATE_EVENT_CHANNEL, handle,
            RemotePeer.NONE).getInt());
        peer.add(ch);
        return ch;
    }

    @Override
    public CmId createId(CmEventChannel channel) throws VerbsException {
        ensureOpen();
        int ch = peer.handleOf(channel, RemoteCmEventChannel.class, this, "event channel");
        RemoteCmId id = new RemoteCmId(this, peer.call(Op.CREATE_ID, handle, out -> out.putInt(ch)).getInt(),
            (RemoteCmEventChannel) channel);
        peer.add(id);
        return id;
    }

    /**
     * Not available: the device's tracker lives in the peer JVM.
     *
     * @return never
     * @throws UnsupportedOperationException always; use {@link #openResources()}
     */
    @Override
    public ResourceTracker resources() {
        throw new UnsupportedOperationException("the resource tracker of " + this + " lives in peer JVM " + peer.pid()
            + ": ask it with openResources()");
    }

    /** What the peer's tracker of this device holds open. */
    record OpenResources(int count, String report) {
    }

    /**
     * What a device of a test holds open, asked where its tracker lives: in the peer for a remote
     * device, here for any other.
     *
     * @param device a device
     * @return its open count and leak report
     */
    static OpenResources openResources(RdmaDevice device) {
        if (device instanceof RemoteDevice remote) {
            return remote.openResources();
        }
        return new OpenResources(device.resources().openCount(), device.resources().report());
    }

    /**
     * Asks the peer what this device holds open.
     *
     * @return the open count and the leak report of the device's tracker
     */
    OpenResources openResources() {
        ByteBuffer r = peer.invoke(Op.OPEN_RESOURCES, handle, RemotePeer.NONE);
        return new OpenResources(r.getInt(), RemoteProtocol.getString(r));
    }

    /** The fault knobs of the peer's device that the suites use ({@link SoftFaults}). */
    final class Faults {
        private Faults() {
        }

        /**
         * Delays the data movement of RDMA READs posted on the device.
         *
         * @param ns the delay, 0 for none
         */
        void readDelayNs(long ns) {
            peer.invoke(Op.FAULT_READ_DELAY, handle, out -> out.putLong(ns));
        }

        /**
         * Makes address resolution from the device towards {@code address} time out.
         *
         * @param address the address
         */
        void blackhole(InetAddress address) {
            peer.invoke(Op.FAULT_BLACKHOLE, handle, out -> out.putBytes(address.getAddress()));
        }
    }

    /**
     * The device's fault injection, in the peer.
     *
     * @return the knobs
     */
    Faults faults() {
        return new Faults();
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    /** Closes the device in the peer (which reports and closes what is still open there). Idempotent. */
    @Override
    public void close() {
        if (!open.compareAndSet(true, false)) {
            return;
        }
        try {
            peer.invoke(Op.DEVICE_CLOSE, handle, RemotePeer.NONE);
        } catch (RemotePeer.PeerGoneException gone) {
            // the peer's devices went with it
        } finally {
            peer.forget(this);
        }
    }

    private void ensureOpen() throws VerbsException {
        if (!open.get()) {
            throw new VerbsException(Errno.EIO, "device " + this + " is closed");
        }
    }

    @Override
    public String toString() {
        return name + "@peer" + peer.pid();
    }
}
