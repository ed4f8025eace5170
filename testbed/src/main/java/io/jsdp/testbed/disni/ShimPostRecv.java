package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostRecv;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.ReceiveWorkRequest;
import java.io.IOException;
import java.util.List;

/**
 * {@code ibv_post_recv} as a stateful verb call: the requests are snapshot when it is made, and nothing of
 * them can be changed afterwards ({@code RecvWRMod} only reads the wr_id). {@link #execute()} allocates
 * nothing.
 */
final class ShimPostRecv extends SVCPostRecv {
    private final ShimQp qp;
    private final long[] wrIds;
    private final int[] numSge;
    private final long[][] addr;
    private final int[][] length;
    private final int[][] lkey;
    private final ReceiveWorkRequest scratch;
    private final RecvWRMod[] mods;
    private boolean valid = true;

    ShimPostRecv(ShimQp qp, List<IbvRecvWR> list) {
        this.qp = qp;
        int n = list.size();
        wrIds = new long[n];
        numSge = new int[n];
        addr = new long[n][];
        length = new int[n][];
        lkey = new int[n][];
        mods = new RecvWRMod[n];
        int maxSge = 1;
        for (int i = 0; i < n; i++) {
            IbvRecvWR wr = list.get(i);
            wrIds[i] = wr.getWr_id();
            numSge[i] = wr.getNum_sge();
            List<IbvSge> sges = wr.getSg_list(); // null when never set: libdisni fails the same way
            addr[i] = new long[sges.size()];
            length[i] = new int[sges.size()];
            lkey[i] = new int[sges.size()];
            for (int j = 0; j < sges.size(); j++) {
                IbvSge s = sges.get(j);
                addr[i][j] = s.getAddr();
                length[i][j] = s.getLength();
                lkey[i][j] = s.getLkey();
            }
            maxSge = Math.max(maxSge, sges.size());
            long id = wrIds[i];
            mods[i] = () -> id;
        }
        scratch = new ReceiveWorkRequest(maxSge);
    }

    @Override
    public SVCPostRecv execute() throws IOException {
        if (!qp.isOpen()) {
            throw new IOException("Trying to post recv on closed QP");
        }
        for (int i = 0; i < wrIds.length; i++) {
            if (numSge[i] > addr[i].length || numSge[i] < 0) {
                throw Strerror.failure("j2c::post_recv: ibv_post_recv failed", Errno.EINVAL);
            }
            scratch.numSge(0);
            scratch.wrId(wrIds[i]);
            for (int j = 0; j < numSge[i]; j++) {
                scratch.sge(j, addr[i][j], length[i][j], lkey[i][j]);
            }
            int rc = qp.soft.postRecv(scratch);
            if (rc != Errno.OK) {
                throw Strerror.failure("j2c::post_recv: ibv_post_recv failed", rc);
            }
        }
        return this;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public SVCPostRecv free() {
        valid = false;
        return this;
    }

    @Override
    public RecvWRMod getWrMod(int index) throws IOException {
        return mods[index];
    }
}
