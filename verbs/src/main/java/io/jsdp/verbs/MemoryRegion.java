package io.jsdp.verbs;

import java.nio.ByteBuffer;

/**
 * A registered memory region ({@code struct ibv_mr}). Scatter/gather entries and remote addresses are
 * in the device's address space: byte {@code i} of {@link #buffer()} is at {@code address() + i}.
 * Send {@link #address()} and {@link #rkey()} to a peer to let it RDMA into the region.
 */
public interface MemoryRegion extends AutoCloseable {

    /**
     * The device address of byte 0 of the region.
     *
     * @return the address
     */
    long address();

    /**
     * The registered length in bytes.
     *
     * @return the length
     */
    int length();

    /**
     * The local key, for this side's scatter/gather entries.
     *
     * @return the lkey
     */
    int lkey();

    /**
     * The remote key, for peers' RDMA operations.
     *
     * @return the rkey
     */
    int rkey();

    /**
     * The {@link Access} flags granted.
     *
     * @return the flags
     */
    int access();

    /**
     * The registered memory. Its position and limit are the caller's; the device uses absolute
     * indexes.
     *
     * @return the buffer given to {@link ProtectionDomain#register}
     */
    ByteBuffer buffer();

    /**
     * The domain of the region.
     *
     * @return the protection domain
     */
    ProtectionDomain protectionDomain();

    /**
     * Deregisters the region ({@code ibv_dereg_mr}); its keys become invalid at once, so a peer's
     * later RDMA with the rkey fails with {@link WcStatus#REM_ACCESS_ERR}. Idempotent.
     */
    @Override
    void close();
}
