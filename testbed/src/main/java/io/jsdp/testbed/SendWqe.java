package io.jsdp.testbed;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WcStatus;
import java.nio.ByteBuffer;

/**
 * One send-queue slot: a snapshot of a {@link SendWorkRequest} taken at post time, its local
 * scatter/gather entries resolved to memory, and its execution state. Preallocated per slot; owned by
 * the queue pair's send lock.
 */
final class SendWqe {
    static final int POSTED = 0;
    static final int IN_FLIGHT = 1;
    static final int DONE = 2;

    long seq;
    long wrId;
    Opcode opcode;
    int flags;
    int immData;
    long remoteAddress;
    int rkey;
    boolean signaled;
    long total;
    /** Resolved local memory: count, buffers, offsets, lengths and the regions to re-check at execution. */
    int count;
    final ByteBuffer[] buf;
    final int[] off;
    final int[] len;
    final SoftMemoryRegion[] mr;
    /** A local entry did not resolve (bad lkey, outside its region, missing LOCAL_WRITE). */
    boolean localError;
    final ByteBuffer inline;
    /** Remote memory of an RDMA request, as a one-entry list for {@link ScatterGather}. */
    final ByteBuffer[] remoteBuf = new ByteBuffer[1];
    final int[] remoteOff = new int[1];
    final int[] remoteLen = new int[1];

    int state;
    WcStatus status;
    int rnrNaks;
    /** ACK timeouts that expired for this request. */
    int ackTimeouts;
    /** Executed and unanswered: its ACK timeout is running. */
    boolean awaitingAck;
    long notBeforeNs;

    SendWqe(int maxSge, int maxInline) {
        int n = Math.max(1, maxSge);
        buf = new ByteBuffer[n];
        off = new int[n];
        len = new int[n];
        mr = new SoftMemoryRegion[n];
        inline = ByteBuffer.allocate(Math.max(1, maxInline));
    }

    /** Snapshots the request and resolves its local memory through the device's key table. */
    void load(SendWorkRequest r, long seq, boolean signalAll, SoftProtectionDomain pd, MemoryRegionTable table) {
        this.seq = seq;
        wrId = r.wrId();
        Opcode op = r.opcode();
        if (opcode != op) {
            opcode = op; // references are stored only when they change: see ScatterGather.keep
        }
        flags = r.flags();
        immData = r.immData();
        remoteAddress = r.remoteAddress();
        rkey = r.rkey();
        signaled = signalAll || (flags & SendFlags.SIGNALED) != 0;
        state = POSTED;
        if (status != null) {
            status = null;
        }
        rnrNaks = 0;
        ackTimeouts = 0;
        awaitingAck = false;
        notBeforeNs = 0;
        localError = false;
        int n = r.numSge();
        long sum = 0;
        if ((flags & SendFlags.INLINE) != 0) {
            // Inline data is copied now; its addresses need no key (the address names the region).
            int pos = 0;
            for (int i = 0; i < n; i++) {
                long a = r.sgeAddress(i);
                int l = r.sgeLength(i);
                if (l == 0) {
                    continue;
                }
                SoftMemoryRegion m = table.byAddress(a);
                if (m == null || m.isClosed() || !m.contains(a, l)) {
                    localError = true;
                    break;
                }
                inline.put(pos, m.buffer(), m.offsetOf(a), l);
                pos += l;
            }
            sum = pos;
            count = 1;
            ScatterGather.keep(buf, 0, inline);
            off[0] = 0;
            len[0] = pos;
            ScatterGather.keep(mr, 0, null);
        } else {
            boolean needWrite = opcode == Opcode.RDMA_READ;
            for (int i = 0; i < n; i++) {
                long a = r.sgeAddress(i);
                int l = r.sgeLength(i);
                SoftMemoryRegion m = l == 0 ? null : table.byKey(r.sgeLkey(i));
                if (l != 0 && (m == null || m.pd() != pd || !m.contains(a, l)
                    || (needWrite && (m.access() & Access.LOCAL_WRITE) == 0))) {
                    localError = true;
                }
                ScatterGather.keep(buf, i, m == null ? null : m.buffer());
                off[i] = m == null ? 0 : m.offsetOf(a);
                len[i] = l;
                ScatterGather.keep(mr, i, m);
                sum += l;
            }
            count = n;
        }
        total = sum;
    }

    /** Whether a region of a local entry was deregistered since the post. */
    boolean localRegionGone() {
        for (int i = 0; i < count; i++) {
            SoftMemoryRegion m = mr[i];
            if (m != null && m.isClosed()) {
                return true;
            }
        }
        return false;
    }

    void complete(WcStatus s) {
        status = s;
        state = DONE;
    }
}
