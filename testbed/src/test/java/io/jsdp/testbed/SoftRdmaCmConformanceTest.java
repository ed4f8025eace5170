package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import java.net.InetAddress;

/** The connection-manager suite on SoftRdma in one JVM. */
class SoftRdmaCmConformanceTest extends CmConformanceSuite {

    @Override
    protected RdmaDevice openDevice(String side) {
        return SoftDevice.open(ResourceTracker.Level.ALL, fabric());
    }

    /** The fabric of both devices: the host fabric (wires, even in one JVM) unless a subclass says otherwise. */
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.HOST;
    }

    @Override
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        ((SoftDevice) device).faults().blackhole(address);
        return true;
    }
}
