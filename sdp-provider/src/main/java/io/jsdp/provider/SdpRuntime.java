package io.jsdp.provider;

import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.RdmaDevices;
import io.jsdp.verbs.VerbsException;
import io.jsdp.zcopy.ZeroCopy;
import java.util.Objects;

/**
 * The provider's one SDP stack, on the device {@code jsdp.device} chooses, opened on first use. When no
 * device can be opened, the reason is kept and every connection falls back to TCP saying so.
 */
final class SdpRuntime {
    static final TraceComponent TRACE = Trace.component("provider");
    private static final Object LOCK = new Object();
    /** Guarded by LOCK. */
    private static SdpStack stack;
    private static String unavailable;

    private SdpRuntime() {
    }

    /**
     * The stack.
     *
     * @return the stack, or null when there is no device ({@link #unavailableReason()} says why)
     */
    static SdpStack stack() {
        synchronized (LOCK) {
            if (stack == null && unavailable == null) {
                SdpManagement.ensureRegistered();
                try {
                    RdmaDevice device = RdmaDevices.open();
                    stack = SdpStack.openOwning(device);
                    ZeroCopy.install(stack); // offered in every Hello; used per jsdp.zcopy.threshold
                    TRACE.message(TraceLevel.RARE, "runtime.open", "jsdp: SDP over " + device.provider() + " device "
                        + device.name());
                } catch (VerbsException | RuntimeException e) {
                    unavailable = "no RDMA device: " + e.getMessage();
                    TRACE.message(TraceLevel.ERROR, "runtime.noDevice", "jsdp: " + unavailable + "; connections use TCP");
                }
            }
            return stack;
        }
    }

    /**
     * Makes {@code s} the provider's stack instead of one on the device {@code jsdp.device} chooses: for
     * tests that run the provider over another device, e.g. SoftRdma through DiSNI's shim. Only before
     * first use, so a JVM never mixes two stacks; such tests run in a JVM of their own.
     *
     * @param s the stack (the runtime never closes it)
     * @throws IllegalStateException when the runtime has a stack or has given up on one already
     */
    static void use(SdpStack s) {
        Objects.requireNonNull(s, "s");
        synchronized (LOCK) {
            if (stack != null || unavailable != null) {
                throw new IllegalStateException("jsdp: the provider's SDP stack was chosen already ("
                    + (stack != null ? stack.rdmaDevice().provider() + " device " + stack.rdmaDevice().name() : unavailable)
                    + ")");
            }
            stack = s;
            if (s.largeTransfers() == null) {
                ZeroCopy.install(s);
            }
            TRACE.message(TraceLevel.RARE, "runtime.use", "jsdp: SDP over " + s.rdmaDevice().provider() + " device "
                + s.rdmaDevice().name() + " (given)");
        }
    }

    /**
     * The stack when it is open, without opening it: for diagnostics.
     *
     * @return the stack, or null
     */
    static SdpStack stackIfOpen() {
        synchronized (LOCK) {
            return stack;
        }
    }

    /**
     * The provider's zero copy (for {@link io.jsdp.Sdp#allocateDirect}).
     *
     * @return the stack's zero copy, or null when there is no SDP device
     */
    static ZeroCopy zeroCopy() {
        SdpStack s = stack();
        return s == null ? null : (ZeroCopy) s.largeTransfers();
    }

    /**
     * Why there is no stack.
     *
     * @return the reason, or null
     */
    static String unavailableReason() {
        synchronized (LOCK) {
            return unavailable;
        }
    }
}
