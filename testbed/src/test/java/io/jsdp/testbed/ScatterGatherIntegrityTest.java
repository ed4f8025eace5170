package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Random scatter/gather layouts (1 to 4 entries on each side, random lengths including 0, random places)
 * for SEND, RDMA WRITE and RDMA READ: the bytes that arrive are the gathered source bytes in order, placed
 * entry after entry, and not one byte outside the destination entries changes.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ScatterGatherIntegrityTest extends TwoDeviceTest {
    private static final int ROUNDS = 3_000;
    private static final int MAX_ENTRY = 700;
    /** Source entries are taken from the first half of a region, destinations from the second. */
    private static final int HALF = Connection.REGION_BYTES / 2;
    private static final long SEED = System.nanoTime();

    /** A scatter/gather list: offsets into a region and lengths. */
    private static final class Layout {
        final int[] offset = new int[4];
        final int[] length = new int[4];
        int count;
        int total;

        /** 1-4 entries anywhere in {@code [base, base + HALF)}; they may overlap (fine for a gather source). */
        static Layout source(SplittableRandom r, int base) {
            Layout l = new Layout();
            l.count = 1 + r.nextInt(4);
            for (int i = 0; i < l.count; i++) {
                l.length[i] = r.nextInt(10) == 0 ? 0 : 1 + r.nextInt(MAX_ENTRY);
                l.offset[i] = base + r.nextInt(HALF - l.length[i]);
                l.total += l.length[i];
            }
            return l;
        }

        /**
         * 1-4 disjoint entries in {@code [base, base + HALF)}, in random order, holding at least {@code atLeast}
         * bytes: slots of HALF/4 bytes, shuffled, one entry per slot.
         */
        static Layout destination(SplittableRandom r, int base, int atLeast) {
            Layout l = new Layout();
            l.count = 1 + r.nextInt(4);
            int[] slots = {0, 1, 2, 3};
            for (int i = 3; i > 0; i--) {
                int j = r.nextInt(i + 1);
                int t = slots[i];
                slots[i] = slots[j];
                slots[j] = t;
            }
            int slotBytes = HALF / 4;
            int left = atLeast;
            for (int i = 0; i < l.count; i++) {
                int entriesAfter = l.count - 1 - i;
                // enough room that the remaining entries can still hold what is left
                int minimum = Math.max(0, left - entriesAfter * MAX_ENTRY * 4);
                int len = Math.max(minimum, r.nextInt(10) == 0 ? 0 : 1 + r.nextInt(MAX_ENTRY * 4 / l.count + 1));
                len = Math.min(len, slotBytes);
                l.length[i] = len;
                l.offset[i] = base + slots[i] * slotBytes + r.nextInt(slotBytes - len + 1);
                l.total += len;
                left -= len;
            }
            if (l.total < atLeast) {
                throw new AssertionError("layout generator: " + l.total + " < " + atLeast);
            }
            return l;
        }

        void toSend(SendWorkRequest wr, MemoryRegion mr) {
            for (int i = 0; i < count; i++) {
                wr.sge(i, mr.address() + offset[i], length[i], mr.lkey());
            }
        }

        void toRecv(ReceiveWorkRequest wr, MemoryRegion mr) {
            wr.numSge(0);
            for (int i = 0; i < count; i++) {
                wr.sge(i, mr.address() + offset[i], length[i], mr.lkey());
            }
        }

        /** The gathered bytes. */
        byte[] gather(ByteBuffer b) {
            byte[] out = new byte[total];
            int at = 0;
            for (int i = 0; i < count; i++) {
                b.get(offset[i], out, at, length[i]);
                at += length[i];
            }
            return out;
        }

        /** What {@code dst} (a snapshot of the whole region) must become when {@code data} is scattered into this layout. */
        void scatter(byte[] data, byte[] dst) {
            int at = 0;
            for (int i = 0; i < count && at < data.length; i++) {
                int n = Math.min(length[i], data.length - at);
                System.arraycopy(data, at, dst, offset[i], n);
                at += n;
            }
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("[");
            for (int i = 0; i < count; i++) {
                sb.append(i == 0 ? "" : ", ").append(offset[i]).append('+').append(length[i]);
            }
            return sb.append(']').toString();
        }
    }

    private static void randomize(ByteBuffer b, SplittableRandom r) {
        for (int i = 0; i < b.capacity(); i += 8) {
            b.putLong(i, r.nextLong());
        }
    }

    private static byte[] snapshot(ByteBuffer b) {
        byte[] s = new byte[b.capacity()];
        b.get(0, s);
        return s;
    }

    private static void assertRegion(byte[] expected, ByteBuffer actual, String what) {
        for (int i = 0; i < expected.length; i++) {
            if (expected[i] != actual.get(i)) {
                fail(what + ": byte " + i + " is " + actual.get(i) + ", expected " + expected[i] + " (seed " + SEED + ")");
            }
        }
    }

    @Test
    void randomLayoutsMoveExactlyTheGatheredBytesForSendWriteAndRead() throws Exception {
        Connection c = connect(new Connection.Options());
        SplittableRandom r = new SplittableRandom(SEED);
        ByteBuffer a = c.mrA.buffer();
        ByteBuffer b = c.mrB.buffer();
        SendWorkRequest swr = new SendWorkRequest();
        ReceiveWorkRequest rwr = new ReceiveWorkRequest();
        WorkCompletion[] wc = Await.pollArray();
        randomize(a, r);
        randomize(b, r);
        for (int round = 0; round < ROUNDS; round++) {
            int op = round % 3;
            if (op == 0) {
                // SEND: gather at A, scatter into B's receive
                Layout src = Layout.source(r, 0);
                Layout dst = Layout.destination(r, HALF, src.total);
                String what = "round " + round + " SEND " + src + " -> " + dst;
                byte[] expected = snapshot(b);
                dst.scatter(src.gather(a), expected);
                dst.toRecv(rwr.wrId(round), c.mrB);
                assertEquals(Errno.OK, c.qpB.postRecv(rwr), what);
                src.toSend(swr.clear().wrId(round).opcode(Opcode.SEND).flags(SendFlags.SIGNALED), c.mrA);
                assertEquals(Errno.OK, c.qpA.postSend(swr), what);
                WorkCompletion s = Await.one(c.cqA, wc);
                assertEquals(WcStatus.SUCCESS, s.status(), what);
                WorkCompletion recv = Await.one(c.cqB, wc);
                assertEquals(WcStatus.SUCCESS, recv.status(), what);
                assertEquals(WcOpcode.RECV, recv.opcode(), what);
                assertEquals(src.total, recv.byteLen(), what);
                assertRegion(expected, b, what);
            } else if (op == 1) {
                // RDMA WRITE: gather at A, one contiguous range at B
                Layout src = Layout.source(r, 0);
                int to = HALF + r.nextInt(HALF - src.total + 1);
                String what = "round " + round + " WRITE " + src + " -> " + to;
                byte[] expected = snapshot(b);
                System.arraycopy(src.gather(a), 0, expected, to, src.total);
                src.toSend(swr.clear().wrId(round).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .remote(c.mrB.address() + to, c.mrB.rkey()), c.mrA);
                assertEquals(Errno.OK, c.qpA.postSend(swr), what);
                assertEquals(WcStatus.SUCCESS, Await.one(c.cqA, wc).status(), what);
                assertRegion(expected, b, what);
            } else {
                // RDMA READ: one contiguous range at B, scattered into A
                Layout dst = Layout.destination(r, HALF, 0);
                int from = r.nextInt(HALF - dst.total + 1);
                String what = "round " + round + " READ " + from + " -> " + dst;
                byte[] remote = new byte[dst.total];
                b.get(from, remote);
                byte[] expected = snapshot(a);
                dst.scatter(remote, expected);
                dst.toSend(swr.clear().wrId(round).opcode(Opcode.RDMA_READ).flags(SendFlags.SIGNALED)
                    .remote(c.mrB.address() + from, c.mrB.rkey()), c.mrA);
                assertEquals(Errno.OK, c.qpA.postSend(swr), what);
                WorkCompletion rd = Await.one(c.cqA, wc);
                assertEquals(WcStatus.SUCCESS, rd.status(), what);
                assertEquals(WcOpcode.RDMA_READ, rd.opcode(), what);
                assertEquals(dst.total, rd.byteLen(), what);
                assertRegion(expected, a, what);
            }
            if (round % 50 == 49) {
                randomize(a, r);
                randomize(b, r);
            }
        }
    }
}
