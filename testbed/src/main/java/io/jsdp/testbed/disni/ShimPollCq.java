package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import io.jsdp.verbs.WorkCompletion;
import java.io.IOException;

/**
 * {@code ibv_poll_cq} as a stateful verb call over a fixed {@code IbvWC[]}: each {@link #execute()} polls up
 * to {@code ne} completions and overwrites the first {@link #getPolls()} entries in place. As libdisni does,
 * an unsuccessful completion updates only {@code wr_id}, {@code status} and {@code opcode}; every other
 * field (qp_num, byte_len, imm_data, wc_flags ...) keeps whatever that array slot held before.
 */
final class ShimPollCq extends SVCPollCq {
    private final ShimCq cq;
    private final IbvWC[] wcList;
    private final int ne;
    private final WorkCompletion[] polled;
    private int polls;
    private boolean valid = true;

    ShimPollCq(ShimCq cq, IbvWC[] wcList, int ne) {
        this.cq = cq;
        this.wcList = wcList;
        this.ne = Math.min(ne, wcList.length);
        this.polled = new WorkCompletion[Math.max(1, this.ne)];
        for (int i = 0; i < polled.length; i++) {
            polled[i] = new WorkCompletion();
        }
    }

    @Override
    public SVCPollCq execute() throws IOException {
        polls = 0;
        if (!cq.isOpen()) {
            throw new IOException("Polling CQ failed");
        }
        int n = cq.soft.poll(polled, ne);
        if (n < 0) {
            throw new IOException("Polling CQ failed");
        }
        for (int i = 0; i < n; i++) {
            WorkCompletion c = polled[i];
            IbvWC w = wcList[i];
            w.setWr_id(c.wrId());
            w.setStatus(c.status().code());
            w.setOpcode(c.opcode().code());
            if (c.isSuccess()) {
                w.setVendor_err(0);
                w.setByte_len(c.byteLen());
                w.setImm_data(c.immData());
                w.setQp_num(c.qpNumber());
                w.setSrc_qp(0);
                w.setWc_flags(c.flags());
                w.setPkey_index((short) 0);
                w.setSlid((short) 0);
                w.setSl((short) 0);
                w.setDlid_path_bits((short) 0);
            }
        }
        polls = n;
        return this;
    }

    @Override
    public int getPolls() {
        return polls;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public SVCPollCq free() {
        valid = false;
        return this;
    }
}
