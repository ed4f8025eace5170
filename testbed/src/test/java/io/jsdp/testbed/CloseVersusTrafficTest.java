package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Tearing a connection down while both sides post and poll: whatever is destroyed, by whichever side,
 * posts return codes (never throw), nothing deadlocks, every object is released and no agent task fails.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CloseVersusTrafficTest extends TwoDeviceTest {
    private static final int ITERATIONS_PER_ACTION = 30;
    private static final long SEED = System.nanoTime();
    private static final long JOIN_NS = TimeUnit.SECONDS.toNanos(20);

    /** What the destroying thread does, in the middle of the traffic. */
    private enum Teardown {
        CLOSE_ACTIVE_ID, CLOSE_PASSIVE_ID, CLOSE_ACTIVE_QP, CLOSE_PASSIVE_QP, DISCONNECT_ACTIVE, DISCONNECT_PASSIVE,
        ACTIVE_QP_TO_ERROR, DEREGISTER_PASSIVE_REGION, CLOSE_BOTH_IDS_AT_ONCE
    }

    private static Connection.Options options() {
        Connection.Options o = new Connection.Options().retry(1).rnrRetry(7);
        for (QueuePairAttributes a : new QueuePairAttributes[] {o.attrsA(), o.attrsB()}) {
            a.ackTimeoutNs(TimeUnit.MILLISECONDS.toNanos(1)).minRnrTimerNs(TimeUnit.MICROSECONDS.toNanos(100));
        }
        return o;
    }

    @Test
    void destroyingIdsAndQueuePairsUnderTrafficNeverThrowsNorDeadlocks() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED);
        for (Teardown t : Teardown.values()) {
            for (int i = 0; i < ITERATIONS_PER_ACTION; i++) {
                Connection c = connect(options());
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong loopsA = new AtomicLong();
                AtomicLong loopsB = new AtomicLong();
                long startAfter = random.nextLong(200);
                Workers.Task destroyer = () -> {
                    Await.until(() -> loopsA.get() >= startAfter && loopsB.get() >= startAfter, "traffic");
                    tearDown(c, t);
                    long a = loopsA.get();
                    long b = loopsB.get();
                    Await.until(() -> loopsA.get() >= a + 50 && loopsB.get() >= b + 50, "traffic after " + t);
                    stop.set(true);
                };
                String where = t + " #" + i + ", seed " + SEED;
                if (t == Teardown.CLOSE_BOTH_IDS_AT_ONCE) {
                    CyclicBarrier together = new CyclicBarrier(2);
                    Workers.run(JOIN_NS, traffic(c.qpA, c.cqA, c.mrA, c, stop, loopsA, where),
                        traffic(c.qpB, c.cqB, c.mrB, c, stop, loopsB, where),
                        () -> {
                            Await.until(() -> loopsA.get() >= startAfter, "traffic");
                            together.await(5, TimeUnit.SECONDS);
                            c.idA.close();
                        },
                        () -> {
                            together.await(5, TimeUnit.SECONDS);
                            c.idB.close();
                            long a = loopsA.get();
                            Await.until(() -> loopsA.get() >= a + 50, "traffic after closing both");
                            stop.set(true);
                        });
                } else {
                    Workers.run(JOIN_NS, traffic(c.qpA, c.cqA, c.mrA, c, stop, loopsA, where),
                        traffic(c.qpB, c.cqB, c.mrB, c, stop, loopsB, where), destroyer);
                }
                c.close();
                conn = null;
                assertEquals(0, devA.resources().openCount(), () -> where + "\n" + devA.resources().report());
                assertEquals(0, devB.resources().openCount(), () -> where + "\n" + devB.resources().report());
            }
        }
        assertNull(devA.agentFailure());
        assertNull(devB.agentFailure());
    }

    private static void tearDown(Connection c, Teardown t) throws Exception {
        switch (t) {
            case CLOSE_ACTIVE_ID -> c.idA.close();
            case CLOSE_PASSIVE_ID -> c.idB.close();
            case CLOSE_ACTIVE_QP -> c.qpA.close();
            case CLOSE_PASSIVE_QP -> c.qpB.close();
            case DISCONNECT_ACTIVE -> c.idA.disconnect();
            case DISCONNECT_PASSIVE -> c.idB.disconnect();
            case ACTIVE_QP_TO_ERROR -> c.qpA.modify(QpState.ERROR);
            case DEREGISTER_PASSIVE_REGION -> c.mrB.close();
            default -> throw new AssertionError(t);
        }
    }

    /**
     * One side's traffic until {@code stop}: keeps receives posted, sends to the peer, RDMA-writes into the
     * peer's region, polls. Every post must return a code a torn-down queue pair may return; no call may throw.
     */
    private static Workers.Task traffic(QueuePair qp, CompletionQueue cq, MemoryRegion mr, Connection c,
                                        AtomicBoolean stop, AtomicLong loops, String where) {
        return () -> {
            MemoryRegion peer = mr == c.mrA ? c.mrB : c.mrA;
            long peerAddress = peer.address();
            int peerKey = peer.rkey();
            SendWorkRequest swr = new SendWorkRequest();
            ReceiveWorkRequest rwr = new ReceiveWorkRequest();
            WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            long n = 0;
            while (!stop.get()) {
                rwr.numSge(0);
                rwr.wrId(n).sge(0, mr.address(), 64, mr.lkey());
                expectPostCode(qp.postRecv(rwr), where);
                swr.clear().wrId(n).opcode(Opcode.SEND).flags(SendFlags.SIGNALED).sge(0, mr.address() + 1024, 32, mr.lkey());
                expectPostCode(qp.postSend(swr), where);
                swr.clear().wrId(n).opcode(Opcode.RDMA_WRITE).flags((n & 3) == 0 ? SendFlags.SIGNALED : 0)
                    .remote(peerAddress + 2048, peerKey).sge(0, mr.address() + 2048, 64, mr.lkey());
                expectPostCode(qp.postSend(swr), where);
                int polled = cq.poll(wc, wc.length);
                if (polled < 0) {
                    fail(where + ": poll " + Errno.name(polled));
                }
                if ((n & 7) == 0) {
                    LockSupport.parkNanos(1_000);
                }
                n++;
                loops.set(n);
            }
        };
    }

    private static void expectPostCode(int rc, String where) {
        if (rc != Errno.OK && rc != Errno.EINVAL && rc != Errno.ENOMEM) {
            fail(where + ": unexpected post code " + Errno.name(rc));
        }
    }

    @Test
    void closingTheDeviceUnderTrafficReleasesEverything() throws Exception {
        for (int i = 0; i < 20; i++) {
            SoftDevice a = SoftDevice.open(ResourceTracker.Level.SAMPLED);
            try {
                Connection c = Connection.open(a, devB, options());
                AtomicBoolean stop = new AtomicBoolean();
                AtomicLong loopsA = new AtomicLong();
                AtomicLong loopsB = new AtomicLong();
                String where = "device close #" + i;
                Workers.run(JOIN_NS, traffic(c.qpA, c.cqA, c.mrA, c, stop, loopsA, where),
                    traffic(c.qpB, c.cqB, c.mrB, c, stop, loopsB, where),
                    () -> {
                        Await.until(() -> loopsA.get() >= 20 && loopsB.get() >= 20, "traffic");
                        a.close();
                        long la = loopsA.get();
                        long lb = loopsB.get();
                        Await.until(() -> loopsA.get() >= la + 50 && loopsB.get() >= lb + 50, "traffic after close");
                        stop.set(true);
                    });
                assertFalse(a.isOpen());
                assertEquals(0, a.resources().openCount(), a.resources().report());
                assertThrows(VerbsException.class, a::allocateProtectionDomain, "a closed device creates nothing");
                c.close();
                assertEquals(0, devB.resources().openCount(), () -> devB.resources().report());
                assertNull(a.agentFailure());
            } finally {
                a.close();
            }
        }
    }

    @Test
    void concurrentDeregistrationsReleaseTheProtectionDomainOnce() throws Exception {
        // An application thread and device.close() may close the same region at once: the domain's count
        // of users must drop once, or the domain closes while a region still uses it.
        ProtectionDomain pd = devA.allocateProtectionDomain();
        MemoryRegion keep = pd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
        MemoryRegion[] contested = new MemoryRegion[1];
        Workers.race(20_000, TimeUnit.SECONDS.toNanos(30), new Workers.Round() {
            @Override
            public void setUp(int i) throws Exception {
                contested[0] = pd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            }

            @Override
            public void race(int racer) {
                contested[0].close();
            }

            @Override
            public void check(int i) {
                VerbsException busy = assertThrows(VerbsException.class, pd::close,
                    "round " + i + ": the protection domain still has a region");
                assertEquals(Errno.EBUSY, busy.errno());
            }
        });
        keep.close();
        pd.close();
    }
}
