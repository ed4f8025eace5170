package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.SVCDeregMr;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.SVCRegMr;
import com.ibm.disni.verbs.SVCReqNotify;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** DiSNI's verbs over the SoftRdma port, with libdisni's behaviour (see the package description). */
final class ShimVerbs extends RdmaVerbs {

    @Override
    public IbvPd allocPd(IbvContext context) throws IOException {
        ShimContext c = open(context, "Trying to allocate PD on closed context.");
        try {
            return new ShimPd(c, c.device.allocateProtectionDomain());
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::allocPd: ibv_alloc_pd failed", e);
        }
    }

    @Override
    public IbvCompChannel createCompChannel(IbvContext context) throws IOException {
        ShimContext c = open(context, "Trying to create completion channel with closed channel.");
        try {
            return new ShimCompChannel(c, c.device.createCompletionChannel());
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::createCompChannel: ibv_create_comp_channel failed", e);
        }
    }

    @Override
    public IbvCQ createCQ(IbvContext context, IbvCompChannel compChannel, int ncqe, int compVector)
        throws IOException {
        ShimContext c = open(context, "Trying to create CQ with closed context.");
        ShimCompChannel ch = (ShimCompChannel) compChannel; // libdisni requires a channel, too
        if (!ch.isOpen()) {
            throw new IOException("Trying to create CQ with closed completion channel.");
        }
        try {
            return new ShimCq(c, ch, c.device.createCompletionQueue(ch.soft, ncqe));
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::createCQ: ibv_create_cq failed", e);
        }
    }

    @Override
    public boolean getCqEvent(IbvCompChannel compChannel, IbvCQ cq, int timeout) throws IOException {
        ShimCompChannel ch = (ShimCompChannel) compChannel;
        if (!ch.isOpen()) {
            throw new IOException("Trying to get CQ event on closed completion channel.");
        }
        // libdisni polls the channel's fd and calls ibv_get_cq_event, whose CQ it drops: the caller learns
        // only that some queue of the channel fired. The cq argument is ignored, as there.
        long ns = timeout < 0 ? Long.MAX_VALUE : TimeUnit.MILLISECONDS.toNanos(timeout);
        try {
            return ch.soft.await(ns) != null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // poll(2) returns EINTR: no event
            return false;
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::getCqEvent: ibv_get_cq_event failed", e);
        }
    }

    @Override
    public SVCRegMr regMr(IbvPd pd, ByteBuffer buffer, int access) throws IOException {
        return new ShimRegMr((ShimPd) pd, buffer, access);
    }

    @Override
    public SVCRegMr regMr(IbvPd pd, long address, int length, int access) throws IOException {
        throw new IOException("the SoftRdma shim cannot register memory by raw address: register a direct buffer");
    }

    @Override
    public int queryOdpSupport(IbvContext context) {
        return -1; // libdisni without experimental verbs
    }

    @Override
    public int expPrefetchMr(IbvMr mr, long address, int length) {
        return -1;
    }

    @Override
    public SVCDeregMr deregMr(IbvMr mr) throws IOException {
        return new ShimDeregMr((ShimMr) mr);
    }

    @Override
    public SVCPostSend postSend(IbvQP qp, List<IbvSendWR> wrList, List<IbvSendWR> badWrList) throws IOException {
        return new ShimPostSend((ShimQp) qp, wrList);
    }

    @Override
    public SVCPostRecv postRecv(IbvQP qp, List<IbvRecvWR> wrList, List<IbvRecvWR> badWrList) throws IOException {
        return new ShimPostRecv((ShimQp) qp, wrList);
    }

    @Override
    public SVCPollCq pollCQ(IbvCQ cq, IbvWC[] wcList, int ne) throws IOException {
        return new ShimPollCq((ShimCq) cq, wcList, ne);
    }

    @Override
    public SVCReqNotify reqNotifyCQ(IbvCQ cq, boolean solicitedOnly) throws IOException {
        return new ShimReqNotify((ShimCq) cq, solicitedOnly);
    }

    @Override
    public int ackCqEvents(IbvCQ cq, int nevents) throws IOException {
        if (!cq.isOpen()) {
            throw new IOException("Trying to acknowledge events on closed CQ.");
        }
        ((ShimCq) cq).soft.acknowledgeEvents(nevents);
        return 0;
    }

    // The destroys mark the handle closed before the device is asked, as libdisni does: a refused destroy
    // returns its errno and leaves a handle that can no longer be used.

    @Override
    public int destroyCompChannel(IbvCompChannel compChannel) throws IOException {
        ShimCompChannel ch = (ShimCompChannel) compChannel;
        if (!ch.isOpen()) {
            throw new IOException("Trying to destroy an already destroyed completion channel.");
        }
        ch.close();
        return rc(ch.soft);
    }

    @Override
    public int deallocPd(IbvPd pd) throws IOException {
        ShimPd p = (ShimPd) pd;
        if (!p.isOpen()) {
            throw new IOException("Trying to deallocate a closed protection domain.");
        }
        p.close();
        return rc(p.soft);
    }

    @Override
    public int destroyCQ(IbvCQ cq) throws IOException {
        ShimCq q = (ShimCq) cq;
        if (!q.isOpen()) {
            throw new IOException("Trying to destroy already destroyed CQ.");
        }
        q.close();
        return rc(q.soft);
    }

    /** Closes {@code o}; the verbs return code: 0, or the errno of the refusal. */
    static int rc(AutoCloseable o) {
        try {
            o.close();
            return 0;
        } catch (VerbsException e) {
            return e.errno();
        } catch (Exception e) {
            return Errno.EIO;
        }
    }

    private static ShimContext open(IbvContext context, String closedMessage) throws IOException {
        if (!context.isOpen()) {
            throw new IOException(closedMessage);
        }
        return (ShimContext) context;
    }
}
