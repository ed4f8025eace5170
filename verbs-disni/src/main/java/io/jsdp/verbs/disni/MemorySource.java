package io.jsdp.verbs.disni;

import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.VerbsException;

/**
 * Where a {@link DisniDevice} gets its device memory ({@link io.jsdp.verbs.RdmaDevice#allocateMemory}). On
 * hardware any direct buffer is reachable by peers, so the default allocates one; a test that runs DiSNI
 * over the SoftRdma shim takes the memory from the SoftRdma device under it instead, which is what its peers
 * in other processes can reach.
 */
@FunctionalInterface
public interface MemorySource {
    /**
     * Allocates memory.
     *
     * @param bytes the size, positive
     * @return the memory
     * @throws VerbsException when it cannot be had
     */
    DeviceMemory allocate(int bytes) throws VerbsException;
}
