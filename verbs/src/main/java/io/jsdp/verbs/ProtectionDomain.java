package io.jsdp.verbs;

import java.nio.ByteBuffer;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions and queue pairs of one domain may be
 * used together; a key of another domain is refused.
 */
public interface ProtectionDomain extends AutoCloseable {

    /**
     * The device of this domain.
     *
     * @return the device
     */
    RdmaDevice device();

    /**
     * Registers memory with the device ({@code ibv_reg_mr}). The whole buffer, from index 0 to its
     * capacity, is registered; its position and limit are ignored (as DiSNI does). Only direct
     * buffers can be registered: the device must reach them without the garbage collector moving them.
     *
     * @param buffer a direct buffer, typically from {@link RdmaDevice#allocateMemory} or
     *     {@link ByteBuffer#allocateDirect}
     * @param access a combination of {@link Access} flags
     * @return the region, with its keys and device address
     * @throws VerbsException {@link Errno#EINVAL} for heap buffers or invalid flags (remote write
     *     without local write), {@link Errno#ENOMEM} when the device has no keys left
     */
    MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException;

    /**
     * Deallocates the domain ({@code ibv_dealloc_pd}).
     *
     * @throws VerbsException {@link Errno#EBUSY} while memory regions or queue pairs of the domain
     *     are still open; the domain then stays open
     */
    @Override
    void close() throws VerbsException;
}
