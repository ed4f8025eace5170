package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.SVCReqNotify;
import io.jsdp.verbs.Errno;
import java.io.IOException;

/** {@code ibv_req_notify_cq} as a reusable stateful verb call. */
final class ShimReqNotify extends SVCReqNotify {
    private final ShimCq cq;
    private final boolean solicitedOnly;
    private boolean valid = true;

    ShimReqNotify(ShimCq cq, boolean solicitedOnly) {
        this.cq = cq;
        this.solicitedOnly = solicitedOnly;
    }

    @Override
    public SVCReqNotify execute() throws IOException {
        if (!cq.isOpen()) {
            throw new IOException("Trying to request notification on closed CQ");
        }
        int rc = cq.soft.requestNotify(solicitedOnly);
        if (rc != Errno.OK) {
            throw Strerror.failure("j2c::reqNotifyCQ: ibv_req_notify_cq failed", rc);
        }
        return this;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public SVCReqNotify free() {
        valid = false;
        return this;
    }
}
