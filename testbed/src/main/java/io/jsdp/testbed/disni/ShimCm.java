package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPCap;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.TimeUnit;

/** DiSNI's connection manager over the SoftRdma port, with libdisni's behaviour (see the package description). */
final class ShimCm extends RdmaCm {
    /** libdisni creates queue pairs with this many SGEs each way, whatever the caller's caps say. */
    static final int MAX_SGE = 4;
    /**
     * The fabric's ACK timeout for every queue pair: librdmacm takes it from the path record; this is what
     * an InfiniBand path with packet life time 13 gives (verbs code 14, 4.096 µs × 2^14).
     */
    static final long FABRIC_ACK_TIMEOUT_NS = QueuePairAttributes.ACK_TIMEOUT_DEFAULT_NS;
    /**
     * The fabric's minimum RNR timer: the IB CM's RTR attributes set {@code min_rnr_timer} 0, which encodes
     * the longest timer, 655.36 ms.
     */
    static final long FABRIC_MIN_RNR_TIMER_NS = 655_360_000L;

    private final SoftDisniProvider provider;

    ShimCm(SoftDisniProvider provider) {
        this.provider = provider;
    }

    @Override
    public RdmaEventChannel createEventChannel() throws IOException {
        try {
            return new ShimEventChannel(provider.context().device.createEventChannel());
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::createEventChannel: rdma_create_event_channel failed", e);
        }
    }

    @Override
    public RdmaCmId createId(RdmaEventChannel channel, short ps) throws IOException {
        ShimEventChannel ch = (ShimEventChannel) channel;
        if (!ch.isOpen()) {
            throw new IOException("Trying to create ID with closed channel.");
        }
        // libdisni passes RDMA_PS_TCP whatever ps says
        try {
            CmId soft = provider.context().device.createId(ch.soft);
            ShimCmId id = new ShimCmId(ch, soft, null);
            ch.ids.put(soft, id);
            return id;
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::createId: rdma_create_id failed", e);
        }
    }

    @Override
    public IbvQP createQP(RdmaCmId id, IbvPd pd, IbvQPInitAttr attr) throws IOException {
        ShimCmId i = open(id, "Trying to create QP with closed ID");
        if (!pd.isOpen()) {
            throw new IOException("Trying to create QP with closed PD");
        }
        ShimCq sendCq = (ShimCq) attr.getSend_cq();
        ShimCq recvCq = (ShimCq) attr.getRecv_cq();
        if (!sendCq.isOpen()) {
            throw new IOException("Trying to create a QP with closed send CQ");
        }
        if (!recvCq.isOpen()) {
            throw new IOException("Trying to create a QP with closed receive CQ");
        }
        if (attr.getQp_type() != IbvQP.IBV_QPT_RC) {
            throw Strerror.failure("j2c::createQP: rdma_create_qp failed", Errno.EINVAL); // SoftRdma: RC only
        }
        IbvQPCap cap = attr.cap();
        // Only the caps' sizes and the type reach rdma_create_qp: 4 SGEs each way, no sq_sig_all, and the
        // timers of the fabric.
        QueuePairAttributes a = new QueuePairAttributes().sendCq(sendCq.soft).recvCq(recvCq.soft)
            .maxSendWr(cap.getMax_send_wr()).maxRecvWr(cap.getMax_recv_wr()).maxSendSge(MAX_SGE).maxRecvSge(MAX_SGE)
            .maxInlineData(cap.getMax_inline_data()).signalAll(false)
            .ackTimeoutNs(FABRIC_ACK_TIMEOUT_NS).minRnrTimerNs(FABRIC_MIN_RNR_TIMER_NS);
        try {
            ShimQp qp = new ShimQp(i.soft.createQueuePair(((ShimPd) pd).soft, a));
            i.attach(qp);
            return qp;
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::createQP: rdma_create_qp failed", e);
        }
    }

    @Override
    public void bindAddr(RdmaCmId id, SocketAddress address) throws IOException {
        ShimCmId i = open(id, "Trying to bind() using a closed ID");
        InetSocketAddress a = ipv4(address, "j2c::bind: rdma_bind_addr failed");
        try {
            i.soft.bind(a);
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::bind: rdma_bind_addr failed", e);
        }
        if (!a.getAddress().isAnyLocalAddress()) {
            i.boundTo(provider.context()); // a wildcard bind leaves the id without a device
        }
    }

    @Override
    public void listen(RdmaCmId id, int backlog) throws IOException {
        ShimCmId i = open(id, "Trying to listen on closed ID");
        try {
            i.soft.listen(backlog);
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::listen: rdma_listen failed", e);
        }
    }

    @Override
    public void resolveAddr(RdmaCmId id, SocketAddress source, SocketAddress destination, int timeout)
        throws IOException {
        // libdisni passes no source address to rdma_resolve_addr
        ShimCmId i = open(id, "Trying to resolve address with closed ID");
        InetSocketAddress d = ipv4(destination, "j2c::resolveAddr: rdma_resolve_addr failed");
        try {
            i.soft.resolveAddress(d, timeout);
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::resolveAddr: rdma_resolve_addr failed", e);
        }
    }

    @Override
    public void resolveRoute(RdmaCmId id, int timeout) throws IOException {
        ShimCmId i = open(id, "Trying to resolve route with closed ID");
        try {
            i.soft.resolveRoute(timeout);
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::resolveRoute: rdma_resolve_route failed", e);
        }
    }

    @Override
    public RdmaCmEvent getCmEvent(RdmaEventChannel channel, int timeout) throws IOException {
        ShimEventChannel ch = (ShimEventChannel) channel;
        if (!ch.isOpen()) {
            throw new IOException("Trying to get CM event on closed channel.");
        }
        CmEvent e;
        try {
            e = ch.soft.poll(timeout < 0 ? Long.MAX_VALUE : TimeUnit.MILLISECONDS.toNanos(timeout));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt(); // poll(2) returns EINTR: no event
            return null;
        } catch (VerbsException closed) {
            return null; // libdisni's poll(2) on a bad fd yields no event either
        }
        if (e == null) {
            return null;
        }
        ShimCmId listen = e.listenId() == null ? null : ch.ids.get(e.listenId());
        ShimCmId conn;
        if (e.type() == CmEventType.CONNECT_REQUEST) {
            // the new id of a request joins the listener's channel, bound to the listener's device
            conn = new ShimCmId(ch, e.id(), provider.context());
            ch.ids.put(e.id(), conn);
        } else {
            conn = e.id() == null ? null : ch.ids.get(e.id());
            if (e.type() == CmEventType.ADDR_RESOLVED && conn != null) {
                conn.boundTo(provider.context());
            }
        }
        // libdisni's event: the type and the two ids; status is always -1, connection parameters and private
        // data are empty
        return new RdmaCmEvent(e.type().ordinal(), listen, conn);
    }

    @Override
    public void connect(RdmaCmId id, RdmaConnParam param) throws IOException {
        ShimCmId i = open(id, "Trying to call connect() with closed ID");
        if (param.getPrivate_data_len() != 0) {
            throw new IOException("the SoftRdma shim cannot read private data at a native address");
        }
        try {
            i.soft.connect(parameters(param));
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::connect: rdma_connect failed", e);
        }
    }

    @Override
    public void accept(RdmaCmId id, RdmaConnParam param) throws IOException {
        ShimCmId i = open(id, "Trying to call accept() with closed ID");
        try {
            i.soft.accept(parameters(param)); // no private data: libdisni passes none
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::accept: rdma_accept failed", e);
        }
    }

    @Override
    public int ackCmEvent(RdmaCmEvent event) {
        return 0; // libdisni acknowledges inside getCmEvent
    }

    @Override
    public int disconnect(RdmaCmId id) throws IOException {
        ShimCmId i = open(id, "Trying to disconnect with closed ID");
        // librdmacm's rdma_disconnect (IB) moves the queue pair to ERROR first, then asks the kernel to send
        // the DREQ, which fails (-1, errno EINVAL) on an id that is not connected: the queue pair is in ERROR
        // either way.
        QueuePair qp = i.soft.queuePair();
        if (qp != null && qp.state() != QpState.ERROR && qp.state() != QpState.RESET) {
            try {
                qp.modify(QpState.ERROR);
            } catch (VerbsException destroyed) {
                // nothing to flush
            }
        }
        try {
            i.soft.disconnect();
            return 0;
        } catch (VerbsException e) {
            return -1;
        }
    }

    @Override
    public int destroyEventChannel(RdmaEventChannel channel) throws IOException {
        ShimEventChannel ch = (ShimEventChannel) channel;
        if (!ch.isOpen()) {
            throw new IOException("Trying to destroy an already destroyed channel.");
        }
        ch.close();
        return ShimVerbs.rc(ch.soft);
    }

    @Override
    public int destroyCmId(RdmaCmId id) throws IOException {
        ShimCmId i = open(id, "Trying to destroy an already destroyed ID");
        i.close();
        i.soft.close();
        ((ShimEventChannel) i.getCmChannel()).ids.remove(i.soft);
        return 0;
    }

    @Override
    public int destroyQP(RdmaCmId id) throws IOException {
        ShimCmId i = open(id, "Trying to destroy QP with closed ID.");
        IbvQP qp = i.getQp();
        if (qp == null || !qp.isOpen()) {
            throw new IOException("Trying to destroy an already destroyed QP.");
        }
        qp.close();
        ((ShimQp) qp).soft.close();
        return 0;
    }

    @Override
    public SocketAddress getSrcAddr(RdmaCmId id) throws IOException {
        return open(id, "Trying to get source address with closed ID").soft.localAddress();
    }

    @Override
    public SocketAddress getDstAddr(RdmaCmId id) throws IOException {
        return open(id, "Trying to get destination address with closed ID").soft.remoteAddress();
    }

    @Override
    public int destroyEp(RdmaCmId id) throws IOException {
        ShimCmId i = open(id, "Trying to destroy an endpoint with closed ID");
        IbvQP qp = i.getQp();
        if (qp != null && qp.isOpen()) {
            destroyQP(i);
        }
        return destroyCmId(i);
    }

    private static ConnectionParameters parameters(RdmaConnParam p) throws IOException {
        try {
            return new ConnectionParameters().retryCount(p.getRetry_count()).rnrRetryCount(p.getRnr_retry_count());
        } catch (IllegalArgumentException e) {
            throw Strerror.failure("j2c::connect: retry counts outside 0..7", Errno.EINVAL);
        }
    }

    /** libdisni builds a {@code sockaddr_in}: IPv4 only. */
    private static InetSocketAddress ipv4(SocketAddress address, String call) throws IOException {
        if (!(address instanceof InetSocketAddress a) || !(a.getAddress() instanceof Inet4Address)) {
            throw Strerror.failure(call + " (IPv4 only)", Errno.EINVAL);
        }
        return a;
    }

    private static ShimCmId open(RdmaCmId id, String closedMessage) throws IOException {
        if (!id.isOpen()) {
            throw new IOException(closedMessage);
        }
        return (ShimCmId) id;
    }
}
