package io.jsdp.verbs.disni;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.disni.SoftDisni;
import io.jsdp.testbed.disni.SoftDisniProvider;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;

/**
 * The chain SoftRdma → DiSNI shim → DiSNI → verbs-disni: installs the shim (once per JVM) and opens adapter
 * devices on it. Device memory comes from the SoftRdma device under the shim, which peers in other processes
 * can reach.
 */
public final class DisniChain {
    private DisniChain() {
    }

    /**
     * Opens an adapter device over the shim, installing the shim first if needed.
     *
     * @return the device
     * @throws VerbsException when it cannot be opened
     */
    public static DisniDevice open() throws VerbsException {
        SoftDisniProvider shim = SoftDisni.install();
        return DisniDevice.open(new DisniDevice.Settings().address(InetAddress.getLoopbackAddress())
            .memory(shim.device()::allocateMemory).leakDetection(ResourceTracker.Level.ALL));
    }

    /**
     * The SoftRdma device under the shim.
     *
     * @return the device
     */
    public static SoftDevice soft() {
        return SoftDisni.install().device();
    }

    /**
     * The SoftRdma device under an adapter device of the chain, for fault injection.
     *
     * @param device an adapter device
     * @return the SoftRdma device
     */
    public static SoftDevice softUnder(RdmaDevice device) {
        if (!(device instanceof DisniDevice)) {
            throw new IllegalArgumentException(device + " is not a DiSNI device");
        }
        return soft();
    }
}
