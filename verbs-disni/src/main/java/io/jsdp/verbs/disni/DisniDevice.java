package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaVerbs;
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
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An RDMA device through DiSNI. DiSNI has no "open device" call: a device context is what an
 * {@code rdma_cm_id} bound to an address of the device reports, so opening binds a throw-away id to the
 * device's IPv4 address ({@link Settings#address}) and keeps its context. What DiSNI cannot query (device
 * limits, queue-pair state) the adapter keeps itself.
 */
public final class DisniDevice implements RdmaDevice {
    /** System property: the IPv4 address of the RDMA interface to use; default: the first one found in sysfs. */
    public static final String ADDRESS_PROP = "jsdp.disni.address";

    static final TraceComponent TRACE = Trace.component("device");
    private static final AtomicInteger NUMBERS = new AtomicInteger();
    /**
     * What the adapter lets callers use. DiSNI 2.1 cannot query the device ({@code ibv_query_device}), so
     * these are the adapter's limits: four SGEs (libdisni's {@code MAX_SGE}), no atomics (DiSNI never passes
     * their operands), sizes the device may still refuse at creation.
     */
    private static final DeviceCapabilities CAPABILITIES =
        new DeviceCapabilities(16_384, 4, 256, 65_535, Integer.MAX_VALUE, false);

    final RdmaCm cm;
    final RdmaVerbs verbs;
    final IbvContext context;
    private final String name;
    private final Settings settings;
    private final ResourceTracker tracker;
    private final Set<DisniObject> live = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    private DisniDevice(RdmaCm cm, RdmaVerbs verbs, IbvContext context, Settings settings) {
        this.cm = cm;
        this.verbs = verbs;
        this.context = context;
        this.settings = settings;
        this.name = "disni" + NUMBERS.getAndIncrement();
        this.tracker = new ResourceTracker(name, settings.leakDetection);
    }

    /** How to open a device. */
    public static final class Settings {
        private InetAddress address;
        private MemorySource memory;
        private ResourceTracker.Level leakDetection = ResourceTracker.configuredLevel();

        /** Creates settings: no address yet, direct buffers as device memory, leak detection as configured. */
        public Settings() {
        }

        /**
         * The settings {@code jsdp.*} properties give: the address from {@code jsdp.disni.address}, else the
         * first IPv4 address of a network interface of an RDMA device in {@code /sys/class/infiniband}.
         *
         * @return the settings
         * @throws VerbsException when no address is set and none can be found
         */
        public static Settings fromProperties() throws VerbsException {
            Settings s = new Settings();
            String configured = System.getProperty(ADDRESS_PROP);
            if (configured != null && !configured.isBlank()) {
                try {
                    return s.address(InetAddress.getByName(configured.trim()));
                } catch (UnknownHostException e) {
                    throw new VerbsException(Errno.EINVAL, ADDRESS_PROP + "=" + configured + " is not an address");
                }
            }
            InetAddress found = rdmaInterfaceAddress();
            if (found == null) {
                throw new VerbsException(Errno.ENOENT, "no IPv4 address on a network interface of an RDMA device ("
                    + "/sys/class/infiniband/*/device/net); set " + ADDRESS_PROP);
            }
            return s.address(found);
        }

        /**
         * Sets the IPv4 address of the RDMA interface whose device to open.
         *
         * @param address an address of this host on the RDMA device (loopback for the SoftRdma shim)
         * @return this
         */
        public Settings address(InetAddress address) {
            this.address = address;
            return this;
        }

        /**
         * Sets where device memory comes from.
         *
         * @param memory the source; null for direct buffers
         * @return this
         */
        public Settings memory(MemorySource memory) {
            this.memory = memory;
            return this;
        }

        /**
         * Sets the leak detection of the device's resource tracker.
         *
         * @param level the level
         * @return this
         */
        public Settings leakDetection(ResourceTracker.Level level) {
            this.leakDetection = level;
            return this;
        }
    }

    /**
     * Opens the device of the settings' address through the installed DiSNI provider (libdisni, or a
     * provider a test installed).
     *
     * @param settings address, memory source, leak detection
     * @return the device
     * @throws VerbsException when DiSNI cannot be loaded or no RDMA device has that address
     */
    public static DisniDevice open(Settings settings) throws VerbsException {
        InetAddress address = settings.address;
        if (!(address instanceof Inet4Address)) {
            throw new VerbsException(Errno.EINVAL, "DiSNI needs the IPv4 address of an RDMA interface, not " + address);
        }
        RdmaCm cm;
        RdmaVerbs verbs;
        try {
            cm = RdmaCm.open();
            verbs = RdmaVerbs.open();
        } catch (IOException | LinkageError e) {
            throw new VerbsException(Errno.ENOENT, "DiSNI cannot be loaded (" + e + "); " + DisniRdmaProvider.HOW_TO);
        }
        IbvContext context;
        try {
            RdmaEventChannel channel = cm.createEventChannel();
            try {
                RdmaCmId probe = cm.createId(channel, RdmaCm.RDMA_PS_TCP);
                try {
                    cm.bindAddr(probe, new InetSocketAddress(address, 0));
                    context = probe.getVerbs();
                } finally {
                    cm.destroyCmId(probe);
                }
            } finally {
                cm.destroyEventChannel(channel);
            }
        } catch (IOException e) {
            throw new VerbsException(DisniStatus.errno(e), "no RDMA device has address " + address.getHostAddress()
                + ": " + e.getMessage().trim());
        }
        if (context == null) {
            throw new VerbsException(Errno.ENOENT, "address " + address.getHostAddress() + " is not on an RDMA device");
        }
        DisniDevice d = new DisniDevice(cm, verbs, context, settings);
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.message(TraceLevel.RARE, "device.open", "DiSNI device " + d.name + " at " + address.getHostAddress()
                + " through " + providerName());
        }
        return d;
    }

    /**
     * A device over the given DiSNI objects, for tests that must feed the adapter what neither libdisni nor
     * the shim can be made to produce (mocked DiSNI objects).
     */
    static DisniDevice over(RdmaCm cm, RdmaVerbs verbs, IbvContext context, Settings settings) {
        return new DisniDevice(cm, verbs, context, settings);
    }

    private static String providerName() {
        try {
            return com.ibm.disni.verbs.RdmaProvider.provider().getClass().getName();
        } catch (IOException | LinkageError e) {
            return "?";
        }
    }

    /**
     * The first IPv4 address of a network interface that belongs to an RDMA device, from sysfs.
     *
     * @return the address, or null
     */
    static InetAddress rdmaInterfaceAddress() {
        for (String device : rdmaDevices()) {
            Path net = Path.of("/sys/class/infiniband", device, "device", "net");
            try (DirectoryStream<Path> ifs = Files.newDirectoryStream(net)) {
                for (Path i : ifs) {
                    NetworkInterface ni = NetworkInterface.getByName(i.getFileName().toString());
                    if (ni == null || !isUp(ni)) {
                        continue;
                    }
                    for (Enumeration<InetAddress> as = ni.getInetAddresses(); as.hasMoreElements();) {
                        InetAddress a = as.nextElement();
                        if (a instanceof Inet4Address) {
                            return a;
                        }
                    }
                }
            } catch (IOException | SecurityException e) {
                // no interface listed for this device
            }
        }
        return null;
    }

    /**
     * The RDMA devices sysfs lists ({@code /sys/class/infiniband}), sorted.
     *
     * @return the device names, empty when there are none
     */
    static List<String> rdmaDevices() {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/sys/class/infiniband"))) {
            for (Path p : ds) {
                names.add(p.getFileName().toString());
            }
        } catch (IOException | SecurityException e) {
            // no RDMA subsystem
        }
        names.sort(Comparator.naturalOrder());
        return names;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String provider() {
        return DisniRdmaProvider.NAME;
    }

    @Override
    public DeviceCapabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() throws VerbsException {
        ensureOpen();
        try {
            return new DisniProtectionDomain(this, verbs.allocPd(context));
        } catch (IOException e) {
            throw failure("allocate a protection domain", e);
        }
    }

    @Override
    public CompletionChannel createCompletionChannel() throws VerbsException {
        ensureOpen();
        return new DisniCompletionChannel(this);
    }

    @Override
    public CompletionQueue createCompletionQueue(CompletionChannel channel, int entries) throws VerbsException {
        ensureOpen();
        if (entries < 1 || entries > CAPABILITIES.maxCqe()) {
            throw new VerbsException(Errno.EINVAL, "completion queue size " + entries + " outside 1.." + CAPABILITIES.maxCqe());
        }
        DisniCompletionChannel ch = null;
        if (channel != null) {
            if (!(channel instanceof DisniCompletionChannel c) || c.device() != this) {
                throw new VerbsException(Errno.EINVAL, "completion channel of another device");
            }
            ch = c;
            ch.ensureOpen();
        }
        return new DisniCompletionQueue(this, ch, entries);
    }

    @Override
    public DeviceMemory allocateMemory(int bytes) throws VerbsException {
        ensureOpen();
        if (bytes <= 0) {
            throw new VerbsException(Errno.EINVAL, "device memory size must be positive: " + bytes);
        }
        return settings.memory != null ? settings.memory.allocate(bytes) : new DisniDeviceMemory(this, bytes);
    }

    @Override
    public CmEventChannel createEventChannel() throws VerbsException {
        ensureOpen();
        try {
            return new DisniCmEventChannel(this, cm.createEventChannel());
        } catch (IOException e) {
            throw failure("create an event channel", e);
        }
    }

    @Override
    public CmId createId(CmEventChannel channel) throws VerbsException {
        ensureOpen();
        if (!(channel instanceof DisniCmEventChannel ch) || ch.device() != this) {
            throw new VerbsException(Errno.EINVAL, "event channel of another device");
        }
        return ch.createId();
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
     * Closes the device: reports what is still open (trace component {@code leak}), then closes it in
     * dependency order. The DiSNI device context stays, as librdmacm keeps it for the process. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
        }
        tracker.checkLeaks();
        List<DisniObject> objects = new ArrayList<>(live);
        objects.sort(Comparator.comparingInt(DisniObject::closeOrder));
        for (DisniObject o : objects) {
            o.forceClose();
        }
        tracker.releaseAll();
    }

    void ensureOpen() throws VerbsException {
        if (!open) {
            throw new VerbsException(Errno.EIO, "device " + name + " is closed");
        }
    }

    void register(DisniObject o) {
        live.add(o);
    }

    void unregister(DisniObject o) {
        live.remove(o);
    }

    /** A failed DiSNI call as the port's exception, with the errno libdisni's message names. */
    static VerbsException failure(String what, IOException e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage().trim();
        VerbsException v = new VerbsException(DisniStatus.errno(e), "DiSNI could not " + what + ": " + m);
        v.initCause(e);
        return v;
    }

    @Override
    public String toString() {
        return name;
    }

    private static boolean isUp(NetworkInterface ni) {
        try {
            return ni.isUp();
        } catch (SocketException e) {
            return false;
        }
    }
}
