package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostSend;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.SendWorkRequest;
import java.io.IOException;
import java.util.List;

/**
 * {@code ibv_post_send} as a stateful verb call. As libdisni serialises the work requests into native
 * memory when the call object is made, this snapshots them: later changes to the {@code IbvSendWR} and
 * {@code IbvSge} objects are not seen; only the {@link #getWrMod} setters write through (wr_id, send
 * flags, remote address and key, and the SGEs' address, length and lkey). Per request the snapshot holds
 * {@code getNum_sge()} (not the list's size), opcode, flags, immediate, remote address and key; the
 * atomic fields are never taken (DiSNI 2.1 does not serialise them). {@link #execute()} posts the snapshot,
 * as often as it is called, and allocates nothing.
 */
final class ShimPostSend extends SVCPostSend {
    private static final Opcode[] OPCODES = Opcode.values(); // ordinal == ibv_wr_opcode

    private final ShimQp qp;
    private final Wr[] wrs;
    private final SendWorkRequest scratch;
    private boolean valid = true;

    ShimPostSend(ShimQp qp, List<IbvSendWR> list) {
        this.qp = qp;
        this.wrs = new Wr[list.size()];
        int maxSge = 1;
        for (int i = 0; i < wrs.length; i++) {
            wrs[i] = new Wr(list.get(i));
            maxSge = Math.max(maxSge, wrs[i].sges.length);
        }
        this.scratch = new SendWorkRequest(maxSge);
    }

    @Override
    public SVCPostSend execute() throws IOException {
        if (!qp.isOpen()) {
            throw new IOException("Trying to post send on closed QP");
        }
        for (Wr wr : wrs) {
            if (wr.opcode < 0 || wr.opcode >= OPCODES.length || wr.numSge > wr.sges.length || wr.numSge < 0) {
                throw Strerror.failure("j2c::post_send: ibv_post_send failed", Errno.EINVAL);
            }
            scratch.clear().wrId(wr.wrId).opcode(OPCODES[wr.opcode]).flags(wr.sendFlags).immData(wr.immData)
                .remote(wr.remoteAddr, wr.rkey);
            for (int j = 0; j < wr.numSge; j++) {
                Sge s = wr.sges[j];
                scratch.sge(j, s.addr, s.length, s.lkey);
            }
            int rc = qp.soft.postSend(scratch);
            if (rc != Errno.OK) {
                throw Strerror.failure("j2c::post_send: ibv_post_send failed", rc);
            }
        }
        return this;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public SVCPostSend free() {
        valid = false;
        return this;
    }

    @Override
    public SendWRMod getWrMod(int index) throws IOException {
        return wrs[index];
    }

    /** One serialised request; also its own {@code RdmaMod}. */
    private static final class Wr implements SendWRMod, RdmaMod {
        long wrId;
        final int numSge;
        final int opcode;
        int sendFlags;
        final int immData;
        long remoteAddr;
        int rkey;
        int reserved;
        final Sge[] sges;

        Wr(IbvSendWR wr) {
            this.wrId = wr.getWr_id();
            this.numSge = wr.getNum_sge();
            this.opcode = wr.getOpcode();
            this.sendFlags = wr.getSend_flags();
            this.immData = wr.getImm_data();
            this.remoteAddr = wr.getRdma().getRemote_addr();
            this.rkey = wr.getRdma().getRkey();
            this.reserved = wr.getRdma().getReserved();
            List<IbvSge> list = wr.getSg_list();
            this.sges = new Sge[list.size()];
            for (int j = 0; j < sges.length; j++) {
                sges[j] = new Sge(list.get(j));
            }
        }

        @Override
        public void setWr_id(long wrId) {
            this.wrId = wrId;
        }

        @Override
        public void setSend_flags(int flags) {
            this.sendFlags = flags;
        }

        @Override
        public long getWr_id() {
            return wrId;
        }

        @Override
        public int getNum_sge() {
            return numSge;
        }

        @Override
        public int getOpcode() {
            return opcode;
        }

        @Override
        public int getSend_flags() {
            return sendFlags;
        }

        @Override
        public RdmaMod getRdmaMod() {
            return this;
        }

        @Override
        public SgeMod getSgeMod(int index) {
            return sges[index];
        }

        @Override
        public void setRemote_addr(long address) {
            this.remoteAddr = address;
        }

        @Override
        public long getRemote_addr() {
            return remoteAddr;
        }

        @Override
        public void setRkey(int rkey) {
            this.rkey = rkey;
        }

        @Override
        public int getRkey() {
            return rkey;
        }

        @Override
        public void setReserved(int reserved) {
            this.reserved = reserved;
        }

        @Override
        public int getReserved() {
            return reserved;
        }
    }

    /** One serialised scatter/gather entry. */
    private static final class Sge implements SgeMod {
        long addr;
        int length;
        int lkey;

        Sge(IbvSge sge) {
            this.addr = sge.getAddr();
            this.length = sge.getLength();
            this.lkey = sge.getLkey();
        }

        @Override
        public void setAddr(long addr) {
            this.addr = addr;
        }

        @Override
        public long getAddr() {
            return addr;
        }

        @Override
        public void setLength(int length) {
            this.length = length;
        }

        @Override
        public int getLength() {
            return length;
        }

        @Override
        public void setLkey(int lkey) {
            this.lkey = lkey;
        }

        @Override
        public int getLkey() {
            return lkey;
        }
    }
}
