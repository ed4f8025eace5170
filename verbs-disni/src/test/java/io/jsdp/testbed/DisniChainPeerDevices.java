package io.jsdp.testbed;

import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.disni.DisniChain;

/**
 * What the forked peer JVM opens for the cross-process chain tests: adapter devices over the DiSNI shim of
 * that JVM, so both ends of a connection run SoftRdma → shim → DiSNI → verbs-disni in their own process.
 * (In package {@code io.jsdp.testbed}, beside the peer it plugs into, whose classes are package-private.)
 */
public final class DisniChainPeerDevices implements PeerDevices {
    /** Created by the peer JVM by name. */
    public DisniChainPeerDevices() {
    }

    @Override
    public RdmaDevice open() throws Exception {
        return DisniChain.open();
    }

    @Override
    public SoftDevice faultsOf(RdmaDevice device) {
        return DisniChain.softUnder(device);
    }
}
