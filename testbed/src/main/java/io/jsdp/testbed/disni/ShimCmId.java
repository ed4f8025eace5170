package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import io.jsdp.verbs.CmId;
import java.io.IOException;

/**
 * A CM id handle. Its device context ({@link #getVerbs()}) is null until the id is bound to a device: by
 * binding to an address of this host, by address resolution, or as the new id of a connect request.
 */
final class ShimCmId extends RdmaCmId {
    final CmId soft;

    ShimCmId(ShimEventChannel channel, CmId soft, IbvContext context) throws IOException {
        super(channel, context);
        this.soft = soft;
        this.ps = RdmaCm.RDMA_PS_TCP;
    }

    void boundTo(IbvContext context) {
        setVerbs(context);
    }

    void attach(IbvQP qp) {
        setQp(qp);
    }
}
