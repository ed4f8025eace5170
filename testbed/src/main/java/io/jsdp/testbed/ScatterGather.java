package io.jsdp.testbed;

import java.nio.ByteBuffer;

/**
 * Copies between scatter/gather lists of resolved memory (buffer, offset, length), the one place the
 * device moves payload bytes. Absolute bulk operations: no buffer position or limit is touched, so
 * the application's buffers can be shared freely.
 */
final class ScatterGather {
    private ScatterGather() {
    }

    /**
     * Stores {@code v} at {@code a[i]} only when it is not there already. The work requests of a ring
     * are long-lived and mostly resolve to the buffers of their last use: a reference stored into an
     * old object costs G1 a write barrier and, once per card, its refinement threads; with a new card
     * per request that was a tenth of a CPU at an event loop's rate.
     */
    static <T> void keep(T[] a, int i, T v) {
        if (a[i] != v) {
            a[i] = v;
        }
    }

    /**
     * Copies from the source list into the destination list until either ends.
     */
    static void copy(ByteBuffer[] srcBuf, int[] srcOff, int[] srcLen, int srcCount,
                     ByteBuffer[] dstBuf, int[] dstOff, int[] dstLen, int dstCount) {
        int si = 0;
        int di = 0;
        int sPos = 0;
        int dPos = 0;
        while (si < srcCount && di < dstCount) {
            int sRem = srcLen[si] - sPos;
            if (sRem == 0) {
                si++;
                sPos = 0;
                continue;
            }
            int dRem = dstLen[di] - dPos;
            if (dRem == 0) {
                di++;
                dPos = 0;
                continue;
            }
            int n = Math.min(sRem, dRem);
            dstBuf[di].put(dstOff[di] + dPos, srcBuf[si], srcOff[si] + sPos, n);
            sPos += n;
            dPos += n;
        }
    }
}
