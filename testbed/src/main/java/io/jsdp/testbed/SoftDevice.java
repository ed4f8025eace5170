package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
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
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A SoftRdma device: the verbs port implemented in software, in the way NTRDMA (seed 003) implements
 * RDMA objects over plain memory copies. Data moves when a request is executed, normally in the
 * posting thread, straight into the peer's registered memory; completions appear in the completion
 * queues, which the owner polls. One agent thread per device runs what must happen later: RNR and
 * transport retries, delayed operations, connect timeouts.
 *
 * <p>Devices opened in the same JVM reach each other as hosts on one network (the in-JVM fabric);
 * devices of the {@linkplain Fabric#HOST host fabric} also reach devices of other processes of this
 * user through shared memory.
 */
public final class SoftDevice implements RdmaDevice {
    static final TraceComponent TRACE = Trace.component("device");
    private static final AtomicInteger DEVICE_NUMBERS = new AtomicInteger();
    private static final VarHandle OPEN;
    private static final DeviceCapabilities CAPABILITIES =
        new DeviceCapabilities(16_384, 16, 1_024, 1 << 20, Integer.MAX_VALUE, false);

    static {
        try {
            OPEN = MethodHandles.lookup().findVarHandle(SoftDevice.class, "open", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String name;
    private final InJvmFabric fabric;
    private final Fabric fabricChoice;
    /** This process's node on the host fabric, or null for a device of the in-JVM fabric only. */
    private final HostFabric host;
    /** The device's side of connections to other processes; null with {@link #host}. */
    private final XpEngine xp;
    private final ResourceTracker tracker;
    private final SoftFaults faults = new SoftFaults();
    final MemoryRegionTable memoryRegions = new MemoryRegionTable();
    /** Runs retries, delayed operations and timeouts; one thread, created with the device. */
    private final ScheduledThreadPoolExecutor agent;
    /** Device memory by its buffer (identity), so a registration knows it names shared memory. */
    final java.util.Map<java.nio.ByteBuffer, SoftDeviceMemory> deviceMemory =
        java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());
    /** Every open object, so close() can release what the application left open. */
    private final Set<SoftObject> live = ConcurrentHashMap.newKeySet();
    /** Cleared once, by compare-and-set: of racing closes exactly one reports and releases. */
    private volatile boolean open = true;
    /** The first exception an agent task threw; written once by the agent. */
    private final AtomicReference<Throwable> agentFailure = new AtomicReference<>();

    private SoftDevice(InJvmFabric fabric, Fabric choice, HostFabric host, ResourceTracker.Level leakDetection) {
        this.name = "soft" + DEVICE_NUMBERS.getAndIncrement();
        this.fabric = fabric;
        this.fabricChoice = choice;
        this.host = host;
        XpEngine engine = null;
        if (host != null) {
            try {
                engine = new XpEngine(this, host.node());
            } catch (java.io.IOException e) {
                host.release();
                throw new java.io.UncheckedIOException("cannot create the shared segment of device " + name, e);
            }
        }
        this.xp = engine;
        if (engine != null) {
            faults.onLinkChange(engine::linkChanged);
        }
        this.tracker = new ResourceTracker(name, leakDetection);
        String agentName = "jsdp-" + name + "-agent";
        this.agent = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, agentName);
            t.setDaemon(true);
            return t;
        }) {
            @Override
            protected void afterExecute(Runnable r, Throwable t) {
                super.afterExecute(r, t);
                // The executor keeps a task's exception in its future, where nobody looks: a failed
                // retry would leave its queue pair stalled without a trace.
                Throwable failure = t;
                if (failure == null && r instanceof Future<?> f && f.isDone() && !f.isCancelled()) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        failure = e.getCause();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (failure != null) {
                    onAgentFailure(failure);
                }
            }
        };
        agent.setRemoveOnCancelPolicy(true);
        agent.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Which devices a SoftRdma device reaches. */
    public enum Fabric {
        /** Devices of this JVM only; device memory is plain direct memory. */
        JVM,
        /**
         * Devices of this and other processes of this user through the shared-memory fabric
         * ({@code jsdp.soft.dir}), over wires even within this JVM; devices of the in-JVM fabric
         * directly. Device memory is shared memory.
         */
        HOST,
        /**
         * As {@link #HOST}, but every connection behaves as if across processes, for testing that
         * path in one JVM: it does not reach devices of the in-JVM fabric, and its peers (and it)
         * reach only device memory by RDMA, as another process would.
         */
        HOST_ONLY
    }

    /**
     * Opens a device with the leak detection {@code jsdp.leakDetection} sets, on the fabric
     * {@code jsdp.soft.fabric} names ({@code host} by default, see {@link #open(ResourceTracker.Level)}).
     *
     * @return the device
     */
    public static SoftDevice open() {
        return open(ResourceTracker.configuredLevel());
    }

    /**
     * Opens a device with the given leak detection, on the fabric {@code jsdp.soft.fabric} names:
     * {@code host} (the default) joins the shared-memory fabric, and falls back to the in-JVM fabric,
     * saying so at trace level 1, when the rendezvous directory cannot be used; {@code jvm} stays in
     * this JVM.
     *
     * @param leakDetection how closely to track its objects
     * @return the device
     */
    public static SoftDevice open(ResourceTracker.Level leakDetection) {
        Fabric f = HostFabric.configured();
        if (f == Fabric.JVM) {
            return open(leakDetection, Fabric.JVM);
        }
        try {
            return open(leakDetection, f);
        } catch (java.io.UncheckedIOException e) {
            TRACE.message(TraceLevel.ERROR, "device.hostFabricUnavailable", "the shared-memory fabric cannot be "
                + "joined (" + e.getCause() + "); this device reaches devices of this JVM only");
            return open(leakDetection, Fabric.JVM);
        }
    }

    /**
     * Opens a device on the given fabric.
     *
     * @param leakDetection how closely to track its objects
     * @param fabric which devices it reaches
     * @return the device
     * @throws java.io.UncheckedIOException when a host fabric is asked for and cannot be joined
     */
    public static SoftDevice open(ResourceTracker.Level leakDetection, Fabric fabric) {
        HostFabric host = null;
        if (fabric != Fabric.JVM) {
            try {
                host = HostFabric.acquire();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot join the shared-memory fabric", e);
            }
        }
        SoftDevice d = new SoftDevice(InJvmFabric.INSTANCE, fabric, host, leakDetection);
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, "device.open", d.name.hashCode(), fabric.ordinal());
        }
        return d;
    }

    /**
     * The device's fault-injection knobs.
     *
     * @return the faults
     */
    public SoftFaults faults() {
        return faults;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String provider() {
        return SoftRdmaProvider.NAME;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() throws VerbsException {
        ensureOpen();
        return new SoftProtectionDomain(this);
    }

    @Override
    public CompletionChannel createCompletionChannel() throws VerbsException {
        ensureOpen();
        return new SoftCompletionChannel(this);
    }

    @Override
    public CompletionQueue createCompletionQueue(CompletionChannel channel, int entries) throws VerbsException {
        ensureOpen();
        if (entries < 1 || entries > CAPABILITIES.maxCqe()) {
            throw new VerbsException(Errno.EINVAL, "completion queue size " + entries + " outside 1.."
                + CAPABILITIES.maxCqe());
        }
        SoftCompletionChannel ch = null;
        if (channel != null) {
            if (!(channel instanceof SoftCompletionChannel) || ((SoftCompletionChannel) channel).device() != this) {
                throw new VerbsException(Errno.EINVAL, "completion channel belongs to another device");
            }
            ch = (SoftCompletionChannel) channel;
        }
        return new SoftCompletionQueue(this, ch, entries);
    }

    @Override
    public DeviceMemory allocateMemory(int bytes) throws VerbsException {
        ensureOpen();
        if (bytes <= 0) {
            throw new VerbsException(Errno.EINVAL, "device memory size must be positive: " + bytes);
        }
        if (host == null) {
            return new SoftDeviceMemory(this, bytes);
        }
        try {
            return new SoftDeviceMemory(this, host.node().createSegment(bytes));
        } catch (java.io.IOException e) {
            throw new VerbsException(Errno.ENOMEM, "cannot allocate " + bytes + " bytes of shared device memory: " + e);
        }
    }

    @Override
    public CmEventChannel createEventChannel() throws VerbsException {
        ensureOpen();
        return new SoftCmEventChannel(this);
    }

    @Override
    public CmId createId(CmEventChannel channel) throws VerbsException {
        ensureOpen();
        if (!(channel instanceof SoftCmEventChannel) || ((SoftCmEventChannel) channel).device() != this) {
            throw new VerbsException(Errno.EINVAL, "event channel belongs to another device");
        }
        return new SoftCmId(this, (SoftCmEventChannel) channel, fabric);
    }

    @Override
    public ResourceTracker resources() {
        return tracker;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /**
     * Closes the device: reports every object still open with where it was created (trace component
     * {@code leak}, level 1), then closes them in dependency order and stops the agent.
     */
    @Override
    public void close() {
        if (!OPEN.compareAndSet(this, true, false)) {
            return; // another thread closes it
        }
        tracker.checkLeaks();
        // Dependency order: ids (and their queue pairs), queue pairs, regions, queues, channels, domains.
        closeAll(SoftCmId.class);
        closeAll(SoftQueuePair.class);
        closeAll(SoftMemoryRegion.class);
        closeAll(SoftCompletionQueue.class);
        closeAll(SoftCompletionChannel.class);
        closeAll(SoftCmEventChannel.class);
        closeAll(SoftProtectionDomain.class);
        closeAll(SoftDeviceMemory.class);
        tracker.releaseAll();
        agent.shutdownNow();
        if (host != null) {
            xp.close();
            host.release();
        }
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.record(TraceLevel.RARE, "device.close", name.hashCode());
        }
    }

    private void closeAll(Class<? extends SoftObject> kind) {
        List<SoftObject> objects = new ArrayList<>();
        for (SoftObject o : live) {
            if (kind.isInstance(o)) {
                objects.add(o);
            }
        }
        for (SoftObject o : objects) {
            o.forceClose();
        }
    }

    void ensureOpen() throws VerbsException {
        if (!open) {
            throw new VerbsException(Errno.EIO, "device " + name + " is closed");
        }
    }

    void register(SoftObject o) {
        live.add(o);
    }

    void unregister(SoftObject o) {
        live.remove(o);
    }

    InJvmFabric fabric() {
        return fabric;
    }

    /** The fabric this device was opened on. */
    Fabric fabricChoice() {
        return fabricChoice;
    }

    /** This process's node on the host fabric, or null for an in-JVM device. */
    HostFabric host() {
        return host;
    }

    /** The device's side of connections to other processes, or null for an in-JVM device. */
    XpEngine xp() {
        return xp;
    }

    /**
     * How often this process's shm node thread, on a peer's doorbell, looked at the one queue pair the
     * ringer named and how often at all of them (issue 27: a look at all costs O(queue pairs) per
     * message); zeros for an in-JVM device.
     *
     * @return {one, all}
     */
    public long[] nodeThreadLooks() {
        return xp == null ? new long[2] : xp.nodeThreadLooks();
    }

    /**
     * Runs {@code task} on the agent after {@code delayNs}; does nothing once the device is closed.
     *
     * @return the task, to cancel, or null when the device is closed
     */
    java.util.concurrent.ScheduledFuture<?> schedule(Runnable task, long delayNs) {
        if (!open) {
            return null;
        }
        try {
            return agent.schedule(task, Math.max(0, delayNs), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closedMeanwhile) {
            // the device closed between the check and the call: its objects are being closed too
            return null;
        }
    }

    private void onAgentFailure(Throwable failure) {
        agentFailure.compareAndSet(null, failure);
        TRACE.record(TraceLevel.ERROR, "device.agentFailure", failure);
    }

    /**
     * The first exception an agent task (retry, timeout, delayed operation) threw, or null; every
     * such exception is a device bug, so tests check this after stressing the device.
     */
    Throwable agentFailure() {
        return agentFailure.get();
    }

    @Override
    public String toString() {
        return name;
    }

    /** An object of this device that the device closes when the application did not. */
    interface SoftObject {
        /** Closes without throwing, whatever depends on it. */
        void forceClose();
    }
}
