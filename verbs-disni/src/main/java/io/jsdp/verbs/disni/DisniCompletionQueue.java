package io.jsdp.verbs.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCReqNotify;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.io.IOException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion queue over DiSNI's {@code IbvCQ}, with its own DiSNI completion channel (see
 * {@link DisniCompletionChannel}; DiSNI requires one even for a queue that is only polled).
 *
 * <p>Polling goes through a cached {@code SVCPollCq} per batch size, so the poll path allocates nothing once
 * a size has been used. DiSNI writes completions into reused {@code IbvWC} objects and, for an unsuccessful
 * completion, updates only wr_id, status and opcode: qp_num, byte_len, imm_data and wc_flags are left from
 * whatever the slot held before. {@link #translate} therefore copies those fields only from successful
 * completions; an error completion gets the queue pair from the queue itself when exactly one queue pair
 * uses it (else 0: give each connection its own queues on DiSNI, or tell requests apart by wr_id), and
 * byte length, immediate and flags 0.
 */
final class DisniCompletionQueue implements CompletionQueue, DisniObject {
    /** Largest batch one poll takes; larger requests take this many. */
    static final int MAX_BATCH = 32;
    private static final TraceComponent TRACE = Trace.component("cq");

    private final DisniDevice device;
    private final DisniCompletionChannel channel;
    final IbvCompChannel ownChannel;
    final IbvCQ cq;
    private final int entries;
    private final Tracked tracked;

    /** Guards the poll and arm call objects (DiSNI's are not thread-safe) and their completion arrays. */
    private final ReentrantLock lock = new ReentrantLock();
    private final SVCPollCq[] polls = new SVCPollCq[MAX_BATCH + 1];
    private final IbvWC[][] slots = new IbvWC[MAX_BATCH + 1][];
    private SVCReqNotify armNext;
    private SVCReqNotify armSolicited;

    /** Events returned by the channel and not yet acknowledged: destroying the queue waits for them natively. */
    final AtomicInteger unacknowledged = new AtomicInteger();
    /** Queue pairs that use the queue (send or receive side), for EBUSY and error completions. */
    private final CopyOnWriteArrayList<DisniQueuePair> users = new CopyOnWriteArrayList<>();
    /** The one queue pair using the queue, or null when none or several do; written under {@link #users}' changes. */
    private volatile DisniQueuePair soleUser;
    private volatile boolean overflowed;
    private volatile boolean closed;

    DisniCompletionQueue(DisniDevice device, DisniCompletionChannel channel, int entries) throws VerbsException {
        this.device = device;
        this.channel = channel;
        this.entries = entries;
        IbvCompChannel ch = null;
        try {
            ch = device.verbs.createCompChannel(device.context);
            this.cq = device.verbs.createCQ(device.context, ch, entries, 0);
        } catch (IOException e) {
            if (ch != null) {
                try {
                    device.verbs.destroyCompChannel(ch);
                } catch (IOException ignored) {
                    // the first failure is the one to report
                }
            }
            throw DisniDevice.failure("create a completion queue of " + entries, e);
        }
        this.ownChannel = ch;
        this.tracked = device.resources().track(this, "CQ", "CQ of " + entries + " on " + device.name());
        device.register(this);
        if (channel != null) {
            channel.add(this);
        }
    }

    @Override
    public int poll(WorkCompletion[] completions, int max) {
        int n = Math.min(Math.min(max, completions.length), MAX_BATCH);
        if (overflowed) {
            return -Errno.EOVERFLOW;
        }
        if (n <= 0 || closed) {
            return closed ? -Errno.EINVAL : 0;
        }
        lock.lock();
        try {
            SVCPollCq call = polls[n];
            if (call == null) {
                call = pollCall(n);
                if (call == null) {
                    return -Errno.EIO;
                }
            }
            try {
                call.execute();
            } catch (IOException e) {
                // ibv_poll_cq fails on a queue in error, which for an RC queue means it overflowed
                overflowed();
                return -Errno.EOVERFLOW;
            }
            int polled = call.getPolls();
            IbvWC[] wcs = slots[n];
            for (int i = 0; i < polled; i++) {
                translate(wcs[i], completions[i], soleUser);
            }
            return polled;
        } finally {
            lock.unlock();
        }
    }

    /** Creates the poll call for batches of {@code n}: once per size, then reused. */
    private SVCPollCq pollCall(int n) {
        IbvWC[] wcs = new IbvWC[n];
        for (int i = 0; i < n; i++) {
            wcs[i] = new IbvWC();
        }
        try {
            SVCPollCq call = device.verbs.pollCQ(cq, wcs, n);
            slots[n] = wcs;
            polls[n] = call;
            return call;
        } catch (IOException e) {
            TRACE.record(TraceLevel.ERROR, "cq.pollCallFailed", e);
            return null;
        }
    }

    /**
     * Copies one DiSNI completion into the port's. Of an unsuccessful one only wr_id, status and opcode are
     * DiSNI's; the queue pair comes from {@code only} and the rest is 0, never the slot's stale values.
     *
     * @param wc DiSNI's (reused) completion
     * @param out the port's completion
     * @param only the one queue pair using the queue, or null
     */
    static void translate(IbvWC wc, WorkCompletion out, DisniQueuePair only) {
        WcStatus status = DisniStatus.wcStatus(wc.getStatus());
        WcOpcode opcode = DisniStatus.wcOpcode(wc.getOpcode());
        if (status == WcStatus.SUCCESS) {
            if (opcode == null) {
                opcode = WcOpcode.SEND; // a memory-window bind cannot be posted through DiSNI
            }
            out.set(wc.getWr_id(), status, opcode, wc.getByte_len(), wc.getImm_data(),
                wc.getWc_flags() & WorkCompletion.WITH_IMM, wc.getQp_num());
            return;
        }
        out.set(wc.getWr_id(), status, opcode == null ? WcOpcode.SEND : opcode, 0, 0, 0,
            only == null ? 0 : only.qpNumber());
        if (only != null) {
            only.errorCompletion();
        }
    }

    private void overflowed() {
        if (!overflowed) {
            overflowed = true;
            TRACE.record(TraceLevel.ERROR, "cq.overflow", entries);
            for (DisniQueuePair qp : users) {
                qp.errorCompletion();
            }
        }
    }

    @Override
    public int requestNotify(boolean solicitedOnly) {
        if (channel == null) {
            return Errno.EINVAL;
        }
        if (closed || overflowed) {
            return Errno.EINVAL;
        }
        lock.lock();
        try {
            SVCReqNotify call = solicitedOnly ? armSolicited : armNext;
            if (call == null) {
                call = device.verbs.reqNotifyCQ(cq, solicitedOnly);
                if (solicitedOnly) {
                    armSolicited = call;
                } else {
                    armNext = call;
                }
            }
            call.execute();
            return Errno.OK;
        } catch (IOException e) {
            return DisniStatus.errno(e);
        } finally {
            lock.unlock();
        }
    }

    /** Waits up to {@code ms} for an event on the queue's DiSNI channel; counts it for acknowledgement. */
    boolean waitEvent(int ms) throws VerbsException {
        if (closed) {
            return false;
        }
        try {
            if (device.verbs.getCqEvent(ownChannel, cq, ms)) {
                unacknowledged.incrementAndGet();
                return true;
            }
            return false;
        } catch (IOException e) {
            if (closed) {
                return false;
            }
            throw DisniDevice.failure("wait for a completion event", e);
        }
    }

    @Override
    public void acknowledgeEvents(int count) {
        if (count <= 0 || closed) {
            return;
        }
        try {
            device.verbs.ackCqEvents(cq, count);
            unacknowledged.addAndGet(-count);
        } catch (IOException e) {
            TRACE.record(TraceLevel.ERROR, "cq.ackFailed", e);
        }
    }

    @Override
    public int capacity() {
        return entries;
    }

    @Override
    public CompletionChannel channel() {
        return channel;
    }

    void attach(DisniQueuePair qp) {
        synchronized (users) {
            users.addIfAbsent(qp);
            soleUser = users.size() == 1 ? users.get(0) : null;
        }
    }

    void detach(DisniQueuePair qp) {
        synchronized (users) {
            users.remove(qp);
            soleUser = users.size() == 1 ? users.get(0) : null;
        }
    }

    @Override
    public void close() throws VerbsException {
        if (closed) {
            return;
        }
        if (!users.isEmpty()) {
            throw new VerbsException(Errno.EBUSY, this + " is used by " + users.size() + " queue pair(s)");
        }
        int events = unacknowledged.get();
        if (events > 0) {
            // ibv_destroy_cq would wait for them forever
            throw new VerbsException(Errno.EBUSY, this + " has " + events + " unacknowledged event(s)");
        }
        int rc = release();
        if (rc != 0) {
            throw new VerbsException(rc, "DiSNI could not destroy " + this);
        }
    }

    @Override
    public int closeOrder() {
        return 3;
    }

    @Override
    public void forceClose() {
        int events = unacknowledged.get();
        if (events > 0) {
            acknowledgeEvents(events);
        }
        release();
    }

    private int release() {
        lock.lock();
        try {
            if (closed) {
                return 0;
            }
            closed = true;
            for (SVCPollCq call : polls) {
                if (call != null) {
                    call.free();
                }
            }
            if (armNext != null) {
                armNext.free();
            }
            if (armSolicited != null) {
                armSolicited.free();
            }
        } finally {
            lock.unlock();
        }
        if (channel != null) {
            channel.remove(this);
        }
        int rc;
        try {
            rc = device.verbs.destroyCQ(cq);
            device.verbs.destroyCompChannel(ownChannel);
        } catch (IOException e) {
            rc = DisniStatus.errno(e);
        }
        device.unregister(this);
        tracked.release();
        return rc;
    }

    @Override
    public String toString() {
        return "CQ of " + entries + " on " + device.name();
    }
}
