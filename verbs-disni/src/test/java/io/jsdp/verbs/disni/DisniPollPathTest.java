package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCPollCq;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every work-completion status through the adapter's real poll path. SoftRdma (and so the shim) produces only
 * the statuses of the verbs checklist (success, length, protection, flush, remote errors, retry and RNR
 * exhaustion); the others (LOC_QP_OP_ERR, LOC_EEC_OP_ERR, MW_BIND_ERR, BAD_RESP_ERR, LOC_ACCESS_ERR,
 * LOC_RDD_VIOL_ERR, REM_INV_RD_REQ_ERR, REM_ABORT_ERR, INV_EECN_ERR, INV_EEC_STATE_ERR, FATAL_ERR,
 * RESP_TIMEOUT_ERR, GENERAL_ERR) and a failing {@code ibv_poll_cq} only hardware makes. Here DiSNI's native
 * side is replaced: Mockito stands in for {@code RdmaVerbs} and the handles (whose constructors load
 * libdisni), and {@link NativePoll} fills the polled {@code IbvWC} the way libdisni does, error completions
 * updating only wr_id, status and opcode.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DisniPollPathTest {
    private DisniDevice device;
    private final NativePoll poll = new NativePoll();

    /** libdisni's poll call: one completion per execute, written into the reused slot as NatPollCqCall does. */
    static final class NativePoll extends SVCPollCq {
        IbvWC[] slots;
        long wrId;
        int status;
        int opcode;
        int byteLen;
        int qpNum;
        boolean fail;
        private int polls;

        @Override
        public SVCPollCq execute() throws IOException {
            if (fail) {
                polls = 0;
                throw new IOException("Polling CQ failed");
            }
            IbvWC wc = slots[0];
            wc.setWr_id(wrId);
            wc.setStatus(status);
            wc.setOpcode(opcode);
            if (status == IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
                wc.setByte_len(byteLen);
                wc.setImm_data(0x5eed);
                wc.setQp_num(qpNum);
                wc.setWc_flags(WorkCompletion.WITH_IMM);
            }
            polls = 1;
            return this;
        }

        @Override
        public int getPolls() {
            return polls;
        }

        @Override
        public boolean isValid() {
            return true;
        }

        @Override
        public SVCPollCq free() {
            return this;
        }
    }

    @BeforeEach
    void mockNativeSide() throws Exception {
        RdmaVerbs verbs = mock(RdmaVerbs.class);
        IbvContext context = mock(IbvContext.class);
        IbvCompChannel channel = mock(IbvCompChannel.class);
        IbvCQ cq = mock(IbvCQ.class);
        when(verbs.createCompChannel(context)).thenReturn(channel);
        when(verbs.createCQ(eq(context), eq(channel), anyInt(), anyInt())).thenReturn(cq);
        when(verbs.pollCQ(eq(cq), any(), eq(1))).thenAnswer(call -> {
            poll.slots = call.getArgument(1);
            return poll;
        });
        device = DisniDevice.over(mock(RdmaCm.class), verbs, context, new DisniDevice.Settings()
            .address(InetAddress.getLoopbackAddress()).leakDetection(ResourceTracker.Level.ALL));
    }

    @AfterEach
    void close() {
        device.close();
    }

    @Test
    void everyStatusReachesThePortAndErrorsNeverCarryTheSlotsStaleFields() throws Exception {
        CompletionQueue cq = device.createCompletionQueue(null, 8);
        WorkCompletion[] out = {new WorkCompletion()};
        for (IbvWC.IbvWcStatus s : IbvWC.IbvWcStatus.values()) {
            // a successful completion first leaves qp_num, byte_len, imm_data and flags in the slot
            poll.wrId = 1;
            poll.status = IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal();
            poll.opcode = IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode();
            poll.byteLen = 1234;
            poll.qpNum = 99;
            assertEquals(1, cq.poll(out, 1));
            assertEquals(1234, out[0].byteLen());
            assertEquals(99, out[0].qpNumber());
            assertEquals(0x5eed, out[0].immData());
            poll.wrId = 2 + s.ordinal();
            poll.status = s.ordinal();
            poll.opcode = IbvWC.IbvWcOpcode.IBV_WC_RDMA_WRITE.getOpcode();
            poll.byteLen = 77;
            poll.qpNum = 98;
            assertEquals(1, cq.poll(out, 1), s.name());
            WorkCompletion w = out[0];
            assertEquals(s.name(), "IBV_WC_" + w.status().name());
            assertEquals(2 + s.ordinal(), w.wrId());
            assertEquals(WcOpcode.RDMA_WRITE, w.opcode());
            if (s == IbvWC.IbvWcStatus.IBV_WC_SUCCESS) {
                assertEquals(77, w.byteLen());
                assertEquals(98, w.qpNumber());
            } else {
                assertEquals(0, w.byteLen(), s + ": byte_len of an error completion is stale in DiSNI");
                assertEquals(0, w.immData(), s.name());
                assertEquals(0, w.flags(), s.name());
                assertEquals(0, w.qpNumber(), s + ": no queue pair uses the queue, and qp_num is stale");
            }
        }
        cq.close();
    }

    @Test
    void unknownStatusCodeIsAGeneralError() throws Exception {
        CompletionQueue cq = device.createCompletionQueue(null, 8);
        WorkCompletion[] out = {new WorkCompletion()};
        poll.status = 40;
        poll.opcode = 0;
        assertEquals(1, cq.poll(out, 1));
        assertEquals(WcStatus.GENERAL_ERR, out[0].status());
        cq.close();
    }

    @Test
    void failingNativePollIsAnOverflowAndStaysOne() throws Exception {
        CompletionQueue cq = device.createCompletionQueue(null, 8);
        WorkCompletion[] out = {new WorkCompletion()};
        poll.fail = true;
        assertEquals(-Errno.EOVERFLOW, cq.poll(out, 1));
        poll.fail = false;
        assertEquals(-Errno.EOVERFLOW, cq.poll(out, 1), "an overflowed queue is unusable");
        cq.close();
    }
}
