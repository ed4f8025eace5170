package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvContext;
import io.jsdp.testbed.SoftDevice;
import java.io.IOException;

/** The device context ({@code struct ibv_context}) of the shim's one SoftRdma device. */
final class ShimContext extends IbvContext {
    /** A stable "command fd": DiSNI's endpoint framework keys PD and CQ caches on it. */
    static final int CMD_FD = 3;

    final SoftDevice device;

    ShimContext(SoftDevice device) throws IOException {
        super(CMD_FD, 1);
        this.device = device;
    }
}
