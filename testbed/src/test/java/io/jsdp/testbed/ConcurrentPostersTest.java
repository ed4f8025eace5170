package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two threads post to one queue pair at once; a third polls. Every request completes exactly once,
 * each thread's completions in its own posting order (a queue pair completes in posting order), and
 * every written byte lands.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConcurrentPostersTest extends TwoDeviceTest {
    private static final int POSTERS = 2;
    private static final int PER_POSTER = 25_000;
    /** Most requests one poster keeps outstanding: together they stay below the completion queue. */
    private static final int WINDOW = 64;
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    @Test
    void twoThreadsPostingSignaledWritesOnOneQueuePairGetEveryCompletionExactlyOnce() throws Exception {
        Connection.Options o = new Connection.Options().cqEntries(POSTERS * WINDOW + 16);
        o.attrsA().maxSendWr(POSTERS * WINDOW);
        Connection c = connect(o);
        AtomicLongArray completed = new AtomicLongArray(POSTERS);
        Workers.Task[] tasks = new Workers.Task[POSTERS + 1];
        for (int p = 0; p < POSTERS; p++) {
            int poster = p;
            tasks[p] = () -> {
                SendWorkRequest wr = new SendWorkRequest();
                ByteBuffer src = c.mrA.buffer();
                int srcAt = poster * 4096;
                long deadline = System.nanoTime() + WAIT_NS;
                for (long i = 0; i < PER_POSTER; i++) {
                    while (i - completed.get(poster) >= WINDOW) {
                        if (System.nanoTime() - deadline > 0) {
                            fail("poster " + poster + ": no completion for request " + completed.get(poster));
                        }
                        Thread.onSpinWait();
                    }
                    // Source slot per request (a write reads its source when it executes); each lands in
                    // the poster's own 8-byte cell at B, the last write wins.
                    int at = srcAt + (int) (i % WINDOW) * 8;
                    src.putLong(at, i);
                    wr.clear().wrId((long) poster << 32 | i).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                        .remote(c.mrB.address() + poster * 8L, c.mrB.rkey()).sge(0, c.mrA.address() + at, 8, c.mrA.lkey());
                    int rc = c.qpA.postSend(wr);
                    if (rc != Errno.OK) {
                        fail("poster " + poster + " request " + i + ": " + Errno.name(rc));
                    }
                    deadline = System.nanoTime() + WAIT_NS;
                }
            };
        }
        tasks[POSTERS] = () -> {
            WorkCompletion[] wc = new WorkCompletion[32];
            for (int i = 0; i < wc.length; i++) {
                wc[i] = new WorkCompletion();
            }
            long total = 0;
            long deadline = System.nanoTime() + WAIT_NS;
            while (total < (long) POSTERS * PER_POSTER) {
                int n = c.cqA.poll(wc, wc.length);
                if (n < 0) {
                    fail("poll: " + Errno.name(n));
                }
                if (n == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("no completion after " + total);
                    }
                    Thread.onSpinWait();
                    continue;
                }
                for (int k = 0; k < n; k++) {
                    WorkCompletion w = wc[k];
                    if (w.status() != WcStatus.SUCCESS || w.opcode() != WcOpcode.RDMA_WRITE) {
                        fail("unexpected " + w);
                    }
                    int poster = (int) (w.wrId() >>> 32);
                    long seq = w.wrId() & 0xffff_ffffL;
                    long next = completed.get(poster);
                    if (seq != next) {
                        fail("poster " + poster + ": completion of request " + seq + " where " + next
                            + " was next (lost, duplicated or reordered)");
                    }
                    completed.set(poster, next + 1);
                }
                total += n;
                deadline = System.nanoTime() + WAIT_NS;
            }
        };
        Workers.run(TimeUnit.SECONDS.toNanos(50), tasks);
        for (int p = 0; p < POSTERS; p++) {
            assertEquals(PER_POSTER, completed.get(p));
            assertEquals(PER_POSTER - 1, c.mrB.buffer().getLong(p * 8), "the last write of poster " + p + " landed");
        }
        assertEquals(0, c.cqA.poll(new WorkCompletion[] {new WorkCompletion()}, 1), "nothing more");
    }
}
