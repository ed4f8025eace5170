package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvQP;
import io.jsdp.verbs.QueuePair;
import java.io.IOException;

/**
 * A queue-pair handle. As with libdisni only {@code qp_num} is set: context, PD and CQs stay null and
 * {@code state} stays 0 (DiSNI cannot query a queue pair's state).
 */
final class ShimQp extends IbvQP {
    final QueuePair soft;

    ShimQp(QueuePair soft) throws IOException {
        super(soft.qpNumber());
        this.soft = soft;
    }
}
