package io.jsdp.testbed;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.ReceiveWorkRequest;
import java.nio.ByteBuffer;

/**
 * One receive-queue slot: a snapshot of a {@link ReceiveWorkRequest} with its entries resolved at post
 * time. Problems are recorded, not reported: as on hardware, a bad receive fails when a message
 * consumes it. Owned by the queue pair's receive lock.
 */
final class RecvWqe {
    long wrId;
    int count;
    long capacity;
    boolean invalid;
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
            buf[i] = m == null ? null : m.buffer();
            off[i] = m == null ? 0 : m.offsetOf(a);
            len[i] = l;
            mr[i] = m;
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
        for (int i = 0; i < count; i++) {
            SoftMemoryRegion m = mr[i];
            if (m != null && m.isClosed()) {
                return false;
            }
        }
        return true;
    }
}
