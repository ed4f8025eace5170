package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;

/**
 * What the forked peer JVM ({@link RemotePeerMain}) opens when the test JVM asks for a device, and where its
 * fault injection lives. The default opens SoftRdma devices of the host fabric; another module's tests name
 * their own implementation (a public no-argument constructor) in {@link RemotePeer#start(Class)}, e.g. an
 * adapter device over the DiSNI shim.
 */
interface PeerDevices {
    /** SoftRdma devices of the host fabric. */
    PeerDevices SOFT = new PeerDevices() {
        @Override
        public RdmaDevice open() {
            return SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        }

        @Override
        public SoftDevice faultsOf(RdmaDevice device) {
            return (SoftDevice) device;
        }
    };

    /**
     * Opens a device in the peer JVM.
     *
     * @return the device
     * @throws Exception when it cannot be opened
     */
    RdmaDevice open() throws Exception;

    /**
     * The SoftRdma device whose faults act on {@code device}.
     *
     * @param device a device {@link #open()} returned
     * @return the SoftRdma device
     */
    SoftDevice faultsOf(RdmaDevice device);
}
