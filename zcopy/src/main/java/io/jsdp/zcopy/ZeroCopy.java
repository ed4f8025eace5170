package io.jsdp.zcopy;

import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Zero copy for one {@link SdpStack} ({@code docs/protocol.md} section 9): the factory the engine asks
 * for each connection's {@link LargeTransfers}, the stack's {@link RegistrationCache}, and the device
 * memory it hands applications ({@link #allocateDirect}).
 *
 * <p><b>What is sent by zero copy.</b> A blocking write of a buffer from {@link #allocateDirect} with
 * at least the connection's threshold remaining. Other direct buffers are copied: across processes a
 * peer reaches only device memory (SoftRdma refuses the rest with a remote access error, which the sink
 * must treat as a bad advertisement), and the engine cannot tell whether its peer shares the process.
 * As a sink, any direct buffer receives by RDMA READ (the READ writes local memory).
 *
 * <p>Thread-safe: connections of every thread share the cache under {@link #lock}; callers may hold
 * their connection's lock (the order is always connection, then this).
 */
public final class ZeroCopy implements LargeTransfers.Factory {
    /** Property: whether the stack offers SinkAvail / RDMA WRITE zero copy too (section 9). */
    public static final String SINK_AVAIL_PROP = "jsdp.zcopy.sinkAvail";
    /** Default of {@link #SINK_AVAIL_PROP}. */
    public static final boolean SINK_AVAIL_DEFAULT = true;

    private final SdpStack stack;
    private final ZeroCopySettings settings;
    private final ReentrantLock lock = new ReentrantLock();
    // guarded by lock
    private final RegistrationCache cache;
    private final Map<ByteBuffer, DeviceMemory> deviceBuffers = new IdentityHashMap<>();
    /** Freed by the application while a transfer still held a registration: freed on its release. */
    private final Map<ByteBuffer, DeviceMemory> freeLater = new IdentityHashMap<>();
    private boolean closed;
    /** Offered in the Hellos of connections made from now on; read by the stack's threads. */
    private volatile boolean sinkAvail = sinkAvailProperty();

    private ZeroCopy(SdpStack stack, ZeroCopySettings settings) {
        this.stack = stack;
        this.settings = settings;
        this.cache = new RegistrationCache(stack.protectionDomain(), settings.registrationBudgetBytes());
    }

    /**
     * Gives {@code stack} zero copy with the settings of the system properties; connections made from
     * now on offer it in their Hello.
     *
     * @param stack the stack
     * @return the installed zero copy (the stack closes it)
     */
    public static ZeroCopy install(SdpStack stack) {
        return install(stack, ZeroCopySettings.fromSystemProperties());
    }

    /**
     * Gives {@code stack} zero copy.
     *
     * @param stack the stack
     * @param settings the settings
     * @return the installed zero copy (the stack closes it)
     */
    public static ZeroCopy install(SdpStack stack, ZeroCopySettings settings) {
        ZeroCopy z = new ZeroCopy(stack, settings);
        stack.largeTransfers(z);
        return z;
    }

    private static boolean sinkAvailProperty() {
        String v = System.getProperty(SINK_AVAIL_PROP);
        if (v == null || v.isBlank()) {
            return SINK_AVAIL_DEFAULT;
        }
        return switch (v.trim()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(SINK_AVAIL_PROP + ": expected true or false, got '" + v + "'");
        };
    }

    /**
     * Whether connections made from now on offer SinkAvail (the sink advertises its reader's buffer and
     * the source RDMA-writes into it); {@link #SINK_AVAIL_PROP} sets the start value.
     *
     * @param on false to offer SrcAvail only
     * @return this
     */
    public ZeroCopy sinkAvail(boolean on) {
        this.sinkAvail = on;
        return this;
    }

    @Override
    public int capabilities() {
        return LargeTransfers.CAPABILITY_ZCOPY | (sinkAvail ? LargeTransfers.CAPABILITY_SINK_AVAIL : 0);
    }

    @Override
    public int maxAdverts() {
        return SrcAvailReceiver.MAX_ADVERTS;
    }

    @Override
    public LargeTransfers open(LargeTransfers.Port port) {
        return new ZeroCopyConnection(this, port);
    }

    ZeroCopySettings settings() {
        return settings;
    }

    /**
     * Allocates device memory the peer can RDMA-read even from another process: writes of this buffer
     * itself (not a slice or duplicate) at or above the threshold go by zero copy. It lives until
     * {@link #free} or the stack's close.
     *
     * @param bytes the size
     * @return a direct buffer, position 0, limit {@code bytes}
     * @throws VerbsException when the device has no memory to give
     */
    public ByteBuffer allocateDirect(int bytes) throws VerbsException {
        DeviceMemory m = stack.rdmaDevice().allocateMemory(bytes);
        lock.lock();
        try {
            if (closed) {
                m.close();
                throw new IllegalStateException("the SDP stack is closed");
            }
            ByteBuffer b = m.buffer();
            deviceBuffers.put(b, m);
            return b;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Frees a buffer from {@link #allocateDirect}: its registrations are dropped (invalidating the cache),
     * the memory returns to the device — at once, or when the transfer that still reads it ends.
     *
     * @param buffer the buffer
     * @return false when it is not one of this stack's device buffers
     */
    public boolean free(ByteBuffer buffer) {
        lock.lock();
        try {
            DeviceMemory m = deviceBuffers.remove(buffer);
            if (m == null) {
                return false;
            }
            if (cache.invalidate(buffer)) {
                m.close();
            } else {
                freeLater.put(buffer, m);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@code buffer} is device memory of this stack (from {@link #allocateDirect}).
     *
     * @param buffer any buffer
     * @return true when the peer may read it by RDMA wherever it runs
     */
    public boolean isDeviceMemory(ByteBuffer buffer) {
        lock.lock();
        try {
            return deviceBuffers.containsKey(buffer);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Registers (or finds) a buffer for a transfer; null when the device refuses. A registration gives
     * the peer only what the transfer needs, and the cache never hands it to another kind of transfer:
     * a SrcAvail's is {@link Access#REMOTE_READ} (a peer keeping its rkey can never write the writer's
     * buffer), a SinkAvail's {@link Access#REMOTE_WRITE} and dropped as soon as its advertisement ends
     * ({@link RegistrationCache}), the local side of a READ or WRITE has no remote access.
     *
     * @param remoteAccess 0, {@link Access#REMOTE_READ} or {@link Access#REMOTE_WRITE}; only device
     *     memory gets remote access
     */
    RegistrationCache.Entry acquire(ByteBuffer buffer, int remoteAccess) {
        lock.lock();
        try {
            if (closed) {
                return null;
            }
            int access = Access.LOCAL_WRITE | (deviceBuffers.containsKey(buffer) ? remoteAccess : 0);
            return cache.acquire(buffer, access);
        } catch (VerbsException e) {
            return null;
        } finally {
            lock.unlock();
        }
    }

    void release(RegistrationCache.Entry e) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (cache.release(e)) {
                DeviceMemory m = freeLater.remove(e.buffer);
                if (m != null) {
                    m.close();
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Registrations held now (in use or cached).
     *
     * @return the count
     */
    public int registrations() {
        lock.lock();
        try {
            return cache.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The registration cache's counters.
     *
     * @param registrations registrations held (in use or cached)
     * @param inUse held by a transfer now
     * @param registeredBytes bytes registered
     * @param hits acquisitions that found a registration
     * @param misses acquisitions that registered
     * @param evictions idle registrations dropped for the budget
     */
    public record CacheStats(int registrations, int inUse, long registeredBytes, long hits, long misses, long evictions) {
    }

    /**
     * The registration cache's counters now.
     *
     * @return a consistent copy
     */
    public CacheStats cacheStats() {
        lock.lock();
        try {
            return cache.stats();
        } finally {
            lock.unlock();
        }
    }

    /** Registrations held now that a peer may write into (SinkAvail advertisements in flight). */
    int remoteWriteRegistrations() {
        lock.lock();
        try {
            return cache.remoteWriteRegistrations();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The cache in one line.
     *
     * @return e.g. "registrations=2 bytes=2097152 budget=67108864 hits=98 misses=2 evictions=0"
     */
    public String describe() {
        lock.lock();
        try {
            return cache.describe() + " deviceBuffers=" + deviceBuffers.size();
        } finally {
            lock.unlock();
        }
    }

    /** The stack is closing, after every connection released: deregister and free everything. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            cache.close();
            for (DeviceMemory m : new ArrayList<>(deviceBuffers.values())) {
                m.close();
            }
            for (DeviceMemory m : new ArrayList<>(freeLater.values())) {
                m.close();
            }
            deviceBuffers.clear();
            freeLater.clear();
        } finally {
            lock.unlock();
        }
    }
}
