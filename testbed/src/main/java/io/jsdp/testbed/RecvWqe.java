package io.jsdp.testbed;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.ReceiveWorkRequest;
import java.nio.ByteBuffer;

/**
 * One receive-queue slot: a snapshot of a {@link ReceiveWorkRequest} with its entries resolved at post
 * time. Problems are recorded, not reported: as on hardware, a bad receive fails when a message
 * consumes it.
 *
 * <p>A one-entry receive (the common case) lives in the scalar fields only, so the requester that
 * consumes it reads one object, not five; receives with more entries use the arrays. Written by the
 * posting thread before {@link ReceiveRing} publishes the slot, read by the consumer after.
 */
final class RecvWqe {
    @SuppressWarnings("unused") // accessed through ReceiveRing.SEQ
    private volatile long seq;
    long wrId;
    int count;
    long capacity;
    boolean invalid;
    ByteBuffer buf0;
    int off0;
    int len0;
    SoftMemoryRegion mr0;
    final ByteBuffer[] buf;
    final int[] off;
    final int[] len;
    final SoftMemoryRegion[] mr;

    RecvWqe(int maxSge) {
        int n = Math.max(1, maxSge);
        buf = new ByteBuffer[n];
        off = new int[n];
        len = new int[n];
        mr = new SoftMemoryRegion[n];
    }

    void load(ReceiveWorkRequest r, SoftProtectionDomain pd, MemoryRegionTable table) {
        wrId = r.wrId();
        invalid = false;
        int n = r.numSge();
        long sum = 0;
        for (int i = 0; i < n; i++) {
            long a = r.sgeAddress(i);
            int l = r.sgeLength(i);
            SoftMemoryRegion m = l == 0 ? null : table.byKey(r.sgeLkey(i));
            if (l != 0 && (m == null || m.pd() != pd || !m.contains(a, l) || (m.access() & Access.LOCAL_WRITE) == 0)) {
                invalid = true;
            }
            ByteBuffer b = m == null ? null : m.buffer();
            int o = m == null ? 0 : m.offsetOf(a);
            if (i == 0) {
                if (buf0 != b) {
                    buf0 = b; // see ScatterGather.keep
                }
                off0 = o;
                len0 = l;
                if (mr0 != m) {
                    mr0 = m;
                }
            }
            if (n > 1) {
                ScatterGather.keep(buf, i, b);
                off[i] = o;
                len[i] = l;
                ScatterGather.keep(mr, i, m);
            }
            sum += l;
        }
        count = n;
        capacity = sum;
    }

    /** Whether the receive can take a message now (entries valid and regions still registered). */
    boolean usable() {
        if (invalid) {
            return false;
        }
        if (count == 1) {
            return mr0 == null || !mr0.isClosed();
        }
        for (int i = 0; i < count; i++) {
            SoftMemoryRegion m = mr[i];
            if (m != null && m.isClosed()) {
                return false;
            }
        }
        return true;
    }

    /** Copies {@code length} bytes of {@code src} at {@code at} into this receive (it has room for them). */
    void scatterFrom(ByteBuffer src, int at, int length) {
        if (count == 1) {
            if (length > 0) {
                buf0.put(off0, src, at, length);
            }
            return;
        }
        int pos = at;
        int left = length;
        for (int i = 0; i < count && left > 0; i++) {
            int n = Math.min(len[i], left);
            if (n > 0) {
                buf[i].put(off[i], src, pos, n);
                pos += n;
                left -= n;
            }
        }
    }

    /** Copies a send's payload (its resolved local entries) into this receive. */
    void scatterFrom(SendWqe w) {
        if (count == 1 && w.count == 1) {
            if (w.len[0] > 0) {
                buf0.put(off0, w.buf[0], w.off[0], w.len[0]);
            }
            return;
        }
        if (count == 1) {
            // few entries on the sending side: copy each into the one receive buffer
            int pos = off0;
            for (int i = 0; i < w.count; i++) {
                int l = w.len[i];
                if (l > 0) {
                    buf0.put(pos, w.buf[i], w.off[i], l);
                    pos += l;
                }
            }
            return;
        }
        ScatterGather.copy(w.buf, w.off, w.len, w.count, buf, off, len, count);
    }
}
