package io.jsdp.testbed;

import io.jsdp.ras.TraceLevel;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.testbed.shm.ShmSettings;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * This process's place on the host fabric: the {@link ShmNode} of the rendezvous directory
 * ({@code jsdp.soft.dir}) and its connection manager ({@link HostCm}), shared by every SoftRdma
 * device of the JVM that reaches other processes.
 * Devices acquire it when they open and release it when they close; the last release closes the
 * node, which deletes this process's files.
 */
final class HostFabric {
    /** Property: which fabric a SoftRdma device joins, {@code host} (default) or {@code jvm}. */
    static final String FABRIC_PROP = "jsdp.soft.fabric";

    private static final ReentrantLock LOCK = new ReentrantLock();
    private static HostFabric current; // guarded by LOCK

    private final ShmNode node;
    private final HostCm cm;
    private int users; // guarded by LOCK

    private HostFabric(ShmNode node) {
        this.node = node;
        this.cm = HostCm.start(InJvmFabric.INSTANCE, node);
    }

    /**
     * The fabric {@code jsdp.soft.fabric} names.
     *
     * @return the configured choice
     * @throws IllegalArgumentException naming the property when its value is neither {@code host} nor {@code jvm}
     */
    static SoftDevice.Fabric configured() {
        String v = System.getProperty(FABRIC_PROP);
        if (v == null || v.isBlank()) {
            return SoftDevice.Fabric.HOST;
        }
        switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "host":
                return SoftDevice.Fabric.HOST;
            case "jvm":
                return SoftDevice.Fabric.JVM;
            default:
                throw new IllegalArgumentException(FABRIC_PROP + " must be host or jvm, is '" + v + "'");
        }
    }

    /**
     * Joins the host fabric, opening this process's node on first use.
     *
     * @return the fabric; {@link #release()} it once
     * @throws IOException when the rendezvous directory or the node cannot be opened
     */
    static HostFabric acquire() throws IOException {
        LOCK.lock();
        try {
            if (current == null || !current.node.isOpen()) {
                ShmSettings settings = ShmSettings.fromSystemProperties();
                Rendezvous r = new Rendezvous(Rendezvous.defaultDirectory());
                current = new HostFabric(ShmNode.open(r, settings));
            }
            current.users++;
            return current;
        } finally {
            LOCK.unlock();
        }
    }

    /** Leaves the fabric; the last device to leave closes the node. */
    void release() {
        LOCK.lock();
        try {
            if (--users == 0) {
                if (current == this) {
                    current = null;
                }
                cm.withdrawAddresses();
                node.close();
                SoftDevice.TRACE.message(TraceLevel.RARE, "device.hostFabricClosed", "host fabric node " + node.id()
                    + " closed");
            }
        } finally {
            LOCK.unlock();
        }
    }

    /**
     * This process's node.
     *
     * @return the node
     */
    ShmNode node() {
        return node;
    }

    /**
     * The connection manager of this process's node: host-wide ports and connections across processes.
     *
     * @return the connection manager
     */
    HostCm cm() {
        return cm;
    }

    @Override
    public String toString() {
        return "HostFabric[" + node + "]";
    }
}
