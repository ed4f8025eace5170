package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvMr;
import io.jsdp.verbs.MemoryRegion;
import java.io.IOException;

/**
 * A memory-region handle. Its address is SoftRdma's device address of the region's byte 0 (a synthetic
 * IOVA, not a virtual address), which is what scatter/gather entries and peers' RDMA name.
 */
final class ShimMr extends IbvMr {
    final MemoryRegion soft;

    ShimMr(MemoryRegion soft, int handle) throws IOException {
        // libdisni passes no context to the MR it creates
        super(null, soft.address(), soft.length(), soft.access(), soft.lkey(), soft.rkey(), handle);
        this.soft = soft;
    }
}
