package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Posting and polling through the adapter allocate nothing once the call objects exist (the shim and
 * SoftRdma under it neither), measured with the JVM's per-thread allocation counter: a SEND into a ring of
 * receives reposted with the same wr_ids, the way SDP's receive ring works.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DisniHotPathAllocationTest {
    private static final int RING = 8;

    @Test
    void sendReceiveAndPollAllocateNothingOnceTheCallObjectsExist() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (DisniDevice a = DisniChain.open(); DisniDevice b = DisniChain.open();
             Connection c = Connection.open(a, b, new Connection.Options())) {
            SendWorkRequest send = new SendWorkRequest().opcode(Opcode.SEND).flags(SendFlags.SIGNALED);
            ReceiveWorkRequest recv = new ReceiveWorkRequest();
            WorkCompletion[] wcs = {new WorkCompletion()};
            for (int i = 0; i < RING; i++) {
                recv.numSge(0);
                assertEquals(Errno.OK, c.qpB.postRecv(recv.wrId(i).sge(0, c.mrB.address() + 64L * i, 64, c.mrB.lkey())));
            }
            int rounds = 20_000;
            long before = 0;
            for (int i = 0; i < 2 * rounds; i++) {
                if (i == rounds) {
                    before = mx.getCurrentThreadAllocatedBytes(); // the first half warms up the JIT and the caches
                }
                send.wrId(i).sge(0, c.mrA.address(), 32, c.mrA.lkey());
                if (c.qpA.postSend(send) != Errno.OK) {
                    throw new AssertionError("post failed at " + i);
                }
                while (c.cqA.poll(wcs, 1) == 0) {
                    Thread.onSpinWait();
                }
                while (c.cqB.poll(wcs, 1) == 0) {
                    Thread.onSpinWait();
                }
                int slot = (int) wcs[0].wrId();
                recv.numSge(0);
                if (c.qpB.postRecv(recv.wrId(slot).sge(0, c.mrB.address() + 64L * slot, 64, c.mrB.lkey())) != Errno.OK) {
                    throw new AssertionError("repost failed at " + i);
                }
            }
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < 16 * 1024, rounds + " round trips allocated " + allocated + " bytes");
        }
    }
}
