package io.jsdp.provider;

import io.jsdp.verbs.VerbsException;
import io.jsdp.zcopy.ZeroCopy;
import java.nio.ByteBuffer;

/** The implementation of {@link io.jsdp.Sdp}: device memory of the provider's stack. */
public final class SdpBuffers {
    private SdpBuffers() {
    }

    /**
     * Device memory of the provider's stack, or a plain direct buffer when there is no SDP device.
     *
     * @param capacity bytes
     * @return the buffer
     */
    public static ByteBuffer allocate(int capacity) {
        ZeroCopy zc = SdpRuntime.zeroCopy();
        if (zc == null) {
            return ByteBuffer.allocateDirect(capacity);
        }
        try {
            return zc.allocateDirect(capacity);
        } catch (VerbsException e) {
            OutOfMemoryError oom = new OutOfMemoryError("jsdp: no device memory for " + capacity + " bytes: " + e.getMessage());
            oom.initCause(e);
            throw oom;
        }
    }

    /**
     * Frees device memory from {@link #allocate}.
     *
     * @param buffer the buffer
     * @return true when it was device memory
     */
    public static boolean free(ByteBuffer buffer) {
        ZeroCopy zc = SdpRuntime.zeroCopy();
        return zc != null && zc.free(buffer);
    }
}
