package io.jsdp.verbs.disni;

import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import java.io.IOException;

/**
 * The one table from DiSNI's codes to the port: work-completion status and opcode ({@code IbvWC}), CM
 * event type ({@code RdmaCmEvent}), the status a CM event would have carried (DiSNI drops it), and the
 * errno of a failed call (libdisni puts only {@code strerror(errno)} into its {@code IOException}).
 */
public final class DisniStatus {
    /** By {@code ibv_wc_status} code ({@code IbvWC.IbvWcStatus} ordinal). */
    private static final WcStatus[] WC_STATUS = {
        WcStatus.SUCCESS,            // 0  IBV_WC_SUCCESS
        WcStatus.LOC_LEN_ERR,        // 1  IBV_WC_LOC_LEN_ERR
        WcStatus.LOC_QP_OP_ERR,      // 2  IBV_WC_LOC_QP_OP_ERR
        WcStatus.LOC_EEC_OP_ERR,     // 3  IBV_WC_LOC_EEC_OP_ERR
        WcStatus.LOC_PROT_ERR,       // 4  IBV_WC_LOC_PROT_ERR
        WcStatus.WR_FLUSH_ERR,       // 5  IBV_WC_WR_FLUSH_ERR
        WcStatus.MW_BIND_ERR,        // 6  IBV_WC_MW_BIND_ERR
        WcStatus.BAD_RESP_ERR,       // 7  IBV_WC_BAD_RESP_ERR
        WcStatus.LOC_ACCESS_ERR,     // 8  IBV_WC_LOC_ACCESS_ERR
        WcStatus.REM_INV_REQ_ERR,    // 9  IBV_WC_REM_INV_REQ_ERR
        WcStatus.REM_ACCESS_ERR,     // 10 IBV_WC_REM_ACCESS_ERR
        WcStatus.REM_OP_ERR,         // 11 IBV_WC_REM_OP_ERR
        WcStatus.RETRY_EXC_ERR,      // 12 IBV_WC_RETRY_EXC_ERR
        WcStatus.RNR_RETRY_EXC_ERR,  // 13 IBV_WC_RNR_RETRY_EXC_ERR
        WcStatus.LOC_RDD_VIOL_ERR,   // 14 IBV_WC_LOC_RDD_VIOL_ERR
        WcStatus.REM_INV_RD_REQ_ERR, // 15 IBV_WC_REM_INV_RD_REQ_ERR
        WcStatus.REM_ABORT_ERR,      // 16 IBV_WC_REM_ABORT_ERR
        WcStatus.INV_EECN_ERR,       // 17 IBV_WC_INV_EECN_ERR
        WcStatus.INV_EEC_STATE_ERR,  // 18 IBV_WC_INV_EEC_STATE_ERR
        WcStatus.FATAL_ERR,          // 19 IBV_WC_FATAL_ERR
        WcStatus.RESP_TIMEOUT_ERR,   // 20 IBV_WC_RESP_TIMEOUT_ERR
        WcStatus.GENERAL_ERR,        // 21 IBV_WC_GENERAL_ERR
    };

    /** By {@code rdma_cm_event_type} ({@code RdmaCmEvent.EventType} ordinal). */
    private static final CmEventType[] CM_EVENT = {
        CmEventType.ADDR_RESOLVED,    // 0
        CmEventType.ADDR_ERROR,       // 1
        CmEventType.ROUTE_RESOLVED,   // 2
        CmEventType.ROUTE_ERROR,      // 3
        CmEventType.CONNECT_REQUEST,  // 4
        CmEventType.CONNECT_RESPONSE, // 5
        CmEventType.CONNECT_ERROR,    // 6
        CmEventType.UNREACHABLE,      // 7
        CmEventType.REJECTED,         // 8
        CmEventType.ESTABLISHED,      // 9
        CmEventType.DISCONNECTED,     // 10
        CmEventType.DEVICE_REMOVAL,   // 11
        CmEventType.MULTICAST_JOIN,   // 12
        CmEventType.MULTICAST_ERROR,  // 13
        CmEventType.ADDR_CHANGE,      // 14
        CmEventType.TIMEWAIT_EXIT,    // 15
    };

    /** libdisni's {@code strerror} texts, by errno. */
    private static final Object[][] STRERROR = {
        {Errno.ENOENT, "No such file or directory"},
        {Errno.EIO, "Input/output error"},
        {Errno.ENOMEM, "Cannot allocate memory"},
        {Errno.EBUSY, "Device or resource busy"},
        {19, "No such device"},
        {Errno.EINVAL, "Invalid argument"},
        {Errno.EOVERFLOW, "Value too large for defined data type"},
        {Errno.EOPNOTSUPP, "Operation not supported"},
        {Errno.EADDRINUSE, "Address already in use"},
        {99, "Cannot assign requested address"},
        {Errno.ETIMEDOUT, "Connection timed out"},
        {Errno.ECONNREFUSED, "Connection refused"},
        {Errno.EHOSTUNREACH, "No route to host"},
    };

    private DisniStatus() {
    }

    /**
     * The port's status of an {@code ibv_wc_status} code.
     *
     * @param code the code DiSNI's {@code IbvWC.getStatus()} returns
     * @return the status; {@link WcStatus#GENERAL_ERR} for a code the verbs do not define
     */
    public static WcStatus wcStatus(int code) {
        return code >= 0 && code < WC_STATUS.length ? WC_STATUS[code] : WcStatus.GENERAL_ERR;
    }

    /**
     * The port's opcode of an {@code ibv_wc_opcode} code.
     *
     * @param code the code DiSNI's {@code IbvWC.getOpcode()} returns
     * @return the opcode, or null for a code the port has no opcode for ({@code IBV_WC_BIND_MW}: memory
     *     windows are not part of the port, and DiSNI cannot bind one)
     */
    public static WcOpcode wcOpcode(int code) {
        switch (code) {
            case 0: return WcOpcode.SEND;
            case 1: return WcOpcode.RDMA_WRITE;
            case 2: return WcOpcode.RDMA_READ;
            case 3: return WcOpcode.COMP_SWAP;
            case 4: return WcOpcode.FETCH_ADD;
            case 128: return WcOpcode.RECV;
            case 129: return WcOpcode.RECV_RDMA_WITH_IMM;
            default: return null;
        }
    }

    /**
     * The port's event type of an {@code rdma_cm_event_type}.
     *
     * @param code DiSNI's {@code RdmaCmEvent.getEvent()}
     * @return the type, or null for a code librdmacm does not define
     */
    public static CmEventType cmEventType(int code) {
        return code >= 0 && code < CM_EVENT.length ? CM_EVENT[code] : null;
    }

    /**
     * The status the adapter reports with an event of {@code type}. DiSNI drops librdmacm's status (it is
     * always -1), so the adapter reports the status the event has in the common case: REJECTED
     * {@code -ECONNREFUSED} (no listener; a consumer reject's reason 28 cannot be told apart),
     * UNREACHABLE {@code -ETIMEDOUT}, ADDR_ERROR and ROUTE_ERROR {@code -EHOSTUNREACH} unless they came at or
     * after the resolution's timeout ({@code -ETIMEDOUT}), CONNECT_ERROR {@code -EINVAL} (the queue pair could
     * not be moved to RTR/RTS), DEVICE_REMOVAL {@code -ENODEV}; every other event 0.
     *
     * @param type the event
     * @param timedOut whether a resolution error came at or after its timeout
     * @return 0 or a negative errno
     */
    public static int cmStatus(CmEventType type, boolean timedOut) {
        switch (type) {
            case REJECTED: return -Errno.ECONNREFUSED;
            case UNREACHABLE: return -Errno.ETIMEDOUT;
            case ADDR_ERROR:
            case ROUTE_ERROR:
                return timedOut ? -Errno.ETIMEDOUT : -Errno.EHOSTUNREACH;
            case CONNECT_ERROR: return -Errno.EINVAL;
            case DEVICE_REMOVAL: return -19; // ENODEV
            default: return 0;
        }
    }

    /**
     * The errno of a failed DiSNI call, read from the {@code strerror} text libdisni puts into the message
     * ({@code "j2c::bind: rdma_bind_addr failed: Address already in use"}).
     *
     * @param e the exception
     * @return a positive errno; {@link Errno#EIO} when the message names none
     */
    public static int errno(IOException e) {
        String m = e.getMessage();
        if (m != null) {
            for (Object[] entry : STRERROR) {
                if (m.contains((String) entry[1])) {
                    return (Integer) entry[0];
                }
            }
        }
        return Errno.EIO;
    }
}
