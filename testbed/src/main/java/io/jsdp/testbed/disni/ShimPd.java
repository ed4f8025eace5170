package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import io.jsdp.verbs.ProtectionDomain;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** A protection domain handle over a SoftRdma protection domain. */
final class ShimPd extends IbvPd {
    private static final AtomicInteger HANDLES = new AtomicInteger(1);

    final ProtectionDomain soft;

    ShimPd(IbvContext context, ProtectionDomain soft) throws IOException {
        super(context);
        this.soft = soft;
        this.handle = HANDLES.getAndIncrement();
    }
}
