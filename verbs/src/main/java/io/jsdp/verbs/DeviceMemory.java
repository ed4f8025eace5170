package io.jsdp.verbs;

import java.nio.ByteBuffer;

/** Memory allocated by a device for RDMA, reachable by its peers; see {@link RdmaDevice#allocateMemory}. */
public interface DeviceMemory extends AutoCloseable {

    /**
     * The memory, a direct buffer of the requested size.
     *
     * @return the buffer; do not use it after {@link #close()}
     */
    ByteBuffer buffer();

    /**
     * The size in bytes.
     *
     * @return the size
     */
    int size();

    /** Frees the memory. Regions over it must be closed first. Idempotent. */
    @Override
    void close();
}
