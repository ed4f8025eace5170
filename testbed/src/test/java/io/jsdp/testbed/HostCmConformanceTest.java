package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import java.net.InetAddress;

/**
 * The connection-manager suite through the host fabric's connection manager in one JVM: both devices
 * are {@link SoftDevice.Fabric#HOST_ONLY}, so every connect, accept, reject and disconnect travels as
 * {@link CmMessage}s through this process's node, as between processes.
 */
class HostCmConformanceTest extends CmConformanceSuite {

    @Override
    protected RdmaDevice openDevice(String side) {
        SoftDevice d = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY);
        assertTrue(d.host() != null, "a HOST_ONLY device is on the host fabric");
        return d;
    }

    @Override
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        ((SoftDevice) device).faults().blackhole(address);
        return true;
    }
}
