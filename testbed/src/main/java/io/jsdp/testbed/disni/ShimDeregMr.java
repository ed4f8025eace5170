package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.SVCDeregMr;
import java.io.IOException;

/** {@code ibv_dereg_mr} as a stateful verb call: marks the handle closed and deregisters the region. */
final class ShimDeregMr extends SVCDeregMr {
    private final ShimMr mr;
    private boolean valid = true;

    ShimDeregMr(ShimMr mr) {
        this.mr = mr;
    }

    @Override
    public SVCDeregMr execute() throws IOException {
        if (!mr.isOpen()) {
            throw new IOException("Trying to deregister a closed memory region");
        }
        mr.close();
        mr.soft.close();
        return this;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public SVCDeregMr free() {
        valid = false;
        return this;
    }
}
