package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.VerbsConformanceSuite;

/** The verbs conformance suite on SoftRdma in one JVM, the two sides on two devices. */
class SoftRdmaVerbsConformanceTest extends VerbsConformanceSuite {

    @Override
    protected RdmaDevice openDevice(String side) {
        return SoftDevice.open(ResourceTracker.Level.ALL, fabric());
    }

    /** The fabric of both devices: the host fabric (wires, even in one JVM) unless a subclass says otherwise. */
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.HOST;
    }

    @Override
    protected Faults faults() {
        return (device, ns) -> ((SoftDevice) device).faults().readDelayNs(ns);
    }
}
