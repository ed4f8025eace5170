package io.jsdp.provider;

import io.jsdp.flow.engine.SdpStack;
import io.jsdp.testbed.disni.SoftDisni;
import io.jsdp.testbed.disni.SoftDisniProvider;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.disni.DisniDevice;
import java.net.InetAddress;

/**
 * Puts the provider's SDP stack on the hardware path, run here through SoftRdma → DiSNI shim → DiSNI →
 * verbs-disni (as flowcontrol's {@code DisniChainStreamTest} opens it). The provider has one stack per
 * JVM, so the classes that use this run in JVMs of their own (the module's surefire does not reuse
 * forks); in a JVM whose stack was chosen already, {@link #install()} fails instead of testing SoftRdma
 * under a DiSNI name.
 */
final class DisniChain {
    private static SdpStack stack;

    private DisniChain() {
    }

    /** Installs the shim and makes a stack on a DiSNI adapter device the provider's; idempotent. */
    static synchronized void install() throws Exception {
        if (stack != null) {
            return;
        }
        SoftDisniProvider shim = SoftDisni.install();
        RdmaDevice device = DisniDevice.open(new DisniDevice.Settings().address(InetAddress.getLoopbackAddress())
            .memory(shim.device()::allocateMemory));
        SdpStack s = SdpStack.openOwning(device);
        try {
            SdpRuntime.use(s);
        } catch (IllegalStateException e) {
            s.close();
            throw e;
        }
        stack = s;
    }
}
