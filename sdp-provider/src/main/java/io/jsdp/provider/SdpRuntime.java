package io.jsdp.provider;

import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.RdmaDevices;
import io.jsdp.verbs.VerbsException;

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
                try {
                    RdmaDevice device = RdmaDevices.open();
                    stack = SdpStack.openOwning(device);
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
