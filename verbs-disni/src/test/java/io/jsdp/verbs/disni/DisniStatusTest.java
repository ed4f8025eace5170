package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one table from DiSNI's codes to the port, checked entry by entry against DiSNI's own enums. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DisniStatusTest {

    @Test
    void everyIbvCompletionStatusMapsToThePortStatusOfTheSameNameAndCode() {
        assertEquals(WcStatus.values().length, IbvWC.IbvWcStatus.values().length, "one port status per ibv status");
        for (IbvWC.IbvWcStatus s : IbvWC.IbvWcStatus.values()) {
            WcStatus mapped = DisniStatus.wcStatus(s.ordinal());
            assertEquals(s.name(), "IBV_WC_" + mapped.name());
            assertEquals(s.ordinal(), mapped.code());
        }
    }

    @Test
    void unknownCompletionStatusIsAGeneralError() {
        assertEquals(WcStatus.GENERAL_ERR, DisniStatus.wcStatus(22));
        assertEquals(WcStatus.GENERAL_ERR, DisniStatus.wcStatus(-1));
    }

    @Test
    void everyIbvCompletionOpcodeMapsToThePortOpcodeOfTheSameNameExceptMemoryWindowBind() {
        for (IbvWC.IbvWcOpcode o : IbvWC.IbvWcOpcode.values()) {
            WcOpcode mapped = DisniStatus.wcOpcode(o.getOpcode());
            if (o == IbvWC.IbvWcOpcode.IBV_WC_BIND_MW) {
                assertNull(mapped, "the port has no memory windows");
                continue;
            }
            assertEquals(o.name(), "IBV_WC_" + mapped.name());
            assertEquals(o.getOpcode(), mapped.code());
        }
        assertNull(DisniStatus.wcOpcode(77));
    }

    @Test
    void everyCmEventTypeMapsToThePortTypeOfTheSameOrdinal() {
        assertEquals(CmEventType.values().length, RdmaCmEvent.EventType.values().length);
        for (RdmaCmEvent.EventType t : RdmaCmEvent.EventType.values()) {
            CmEventType mapped = DisniStatus.cmEventType(t.ordinal());
            assertEquals(t.name(), "RDMA_CM_EVENT_" + mapped.name());
            assertEquals(t.ordinal(), mapped.ordinal());
        }
        assertNull(DisniStatus.cmEventType(16));
        assertNull(DisniStatus.cmEventType(-1));
    }

    @Test
    void cmStatusIsSynthesisedForEveryEventTypeBecauseDisniDropsIt() {
        Map<CmEventType, Integer> expected = Map.of(
            CmEventType.REJECTED, -Errno.ECONNREFUSED,
            CmEventType.UNREACHABLE, -Errno.ETIMEDOUT,
            CmEventType.ADDR_ERROR, -Errno.EHOSTUNREACH,
            CmEventType.ROUTE_ERROR, -Errno.EHOSTUNREACH,
            CmEventType.CONNECT_ERROR, -Errno.EINVAL,
            CmEventType.DEVICE_REMOVAL, -19);
        for (CmEventType t : CmEventType.values()) {
            assertEquals(expected.getOrDefault(t, 0), DisniStatus.cmStatus(t, false), t.name());
        }
        assertEquals(-Errno.ETIMEDOUT, DisniStatus.cmStatus(CmEventType.ADDR_ERROR, true));
        assertEquals(-Errno.ETIMEDOUT, DisniStatus.cmStatus(CmEventType.ROUTE_ERROR, true));
    }

    @Test
    void errnoIsReadFromLibdisniStrerrorText() {
        // the format of libdisni's JNI failures: "<call>: <strerror(errno)>\n"
        Map<String, Integer> cases = Map.of(
            "j2c::bind: rdma_bind_addr failed: Address already in use\n", Errno.EADDRINUSE,
            "j2c::post_send: ibv_post_send failed: Cannot allocate memory\n", Errno.ENOMEM,
            "j2c::post_send: ibv_post_send failed: Invalid argument\n", Errno.EINVAL,
            "j2c::connect: rdma_connect failed: Connection refused\n", Errno.ECONNREFUSED,
            "j2c::resolveAddr: rdma_resolve_addr failed: No route to host\n", Errno.EHOSTUNREACH,
            "j2c::createQP: rdma_create_qp failed: Device or resource busy\n", Errno.EBUSY,
            "j2c::regMr: ibv_reg_mr failed: Operation not supported\n", Errno.EOPNOTSUPP,
            "j2c::connect: rdma_connect failed: Connection timed out\n", Errno.ETIMEDOUT,
            "Polling CQ failed", Errno.EIO,
            "Trying to post send on closed QP", Errno.EIO);
        cases.forEach((message, errno) -> assertEquals(errno, DisniStatus.errno(new IOException(message)), message));
        assertEquals(Errno.EIO, DisniStatus.errno(new IOException((String) null)));
    }
}
