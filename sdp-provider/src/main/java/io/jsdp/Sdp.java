package io.jsdp;

import io.jsdp.provider.SdpBuffers;
import java.nio.ByteBuffer;

/**
 * Memory for zero-copy writes. A blocking write on an SDP channel of a buffer from
 * {@link #allocateDirect} with at least the socket's zero-copy threshold remaining
 * ({@link SdpSocketOptions#ZCOPY_THRESHOLD}, default {@code jsdp.zcopy.threshold}) is not copied: the
 * peer reads it in place by RDMA (SrcAvail / RDMA READ, {@code docs/protocol.md} section 9), even from
 * another process, and {@code write} returns once the peer has read it, so the application may then
 * reuse the buffer at once. Other buffers are copied as before: heap buffers always, other direct
 * buffers because a peer in another process could not reach them. Non-blocking writes always copy
 * (they return before the peer could read the buffer).
 *
 * <p>As a reader, any direct buffer receives zero-copy data without a copy; a heap buffer (or one
 * smaller than 4 KiB) makes the writer finish with buffer copy.
 */
public final class Sdp {
    private Sdp() {
    }

    /**
     * Allocates a direct buffer in the SDP device's memory, which peers can read by RDMA. Use the buffer
     * itself: a slice or duplicate of it is copied like any other direct buffer. When no SDP device is
     * available this is {@link ByteBuffer#allocateDirect}.
     *
     * @param capacity the size in bytes
     * @return a direct buffer, position 0, limit {@code capacity}; it lives until {@link #free} or the
     *     JVM's end (the garbage collector does not reclaim device memory)
     * @throws IllegalArgumentException when {@code capacity} is not positive
     * @throws OutOfMemoryError when the device has no memory to give
     */
    public static ByteBuffer allocateDirect(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        return SdpBuffers.allocate(capacity);
    }

    /**
     * Gives a buffer from {@link #allocateDirect} back to the device. Cached registrations of it are
     * dropped; a transfer still reading it (a write another thread blocks in) keeps the memory until
     * it ends. Do not use the buffer afterwards.
     *
     * @param buffer the buffer
     * @return true when it was SDP device memory and is freed; false for any other buffer (left alone)
     */
    public static boolean free(ByteBuffer buffer) {
        return SdpBuffers.free(buffer);
    }
}
