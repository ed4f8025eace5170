package io.jsdp.testbed;

import static io.jsdp.verbs.conformance.Connection.expectEvent;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SoftRdma's fault injection ({@link SoftFaults}) does what it says: failed links end requests in
 * RETRY_EXC_ERR after the transport timeout, delayed operations read their send buffers when they
 * execute, lost, delayed and dropped CM messages give the events librdmacm would.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FaultInjectionTest extends TwoDeviceTest {
    private static final int SIG = SendFlags.SIGNALED;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Operation delay for the buffer-reuse tests: the test must modify the buffer well inside it. */
    private static final long OPERATION_DELAY_NS = 200 * MS;

    private static Connection.Options ackTimeout(long ns, int retries) {
        Connection.Options o = new Connection.Options().retry(retries);
        o.attrsA().ackTimeoutNs(ns);
        o.attrsB().ackTimeoutNs(ns);
        return o;
    }

    private static void fill(MemoryRegion mr, int offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            mr.buffer().put(offset + i, (byte) (seed + i));
        }
    }

    private static void assertFilled(MemoryRegion mr, int offset, int length, int seed, String what) {
        for (int i = 0; i < length; i++) {
            assertEquals((byte) (seed + i), mr.buffer().get(offset + i), what + ", byte " + i);
        }
    }

    // ---------------------------------------------------------------- link down

    @Test
    void linkDownEndsNewSendsInRetryExceededAfterAckTimeoutTimesRetriesPlusOne() throws Exception {
        long ackNs = 10 * MS;
        int retries = 3;
        Connection c = connect(ackTimeout(ackNs, retries));
        assertEquals(Errno.OK, c.recv(c.qpB, 50, c.mrB, 0, 64));
        devA.faults().linkDown(true);
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 8));
        assertEquals(Errno.OK, c.send(c.qpA, 2, Opcode.SEND, SIG, c.mrA, 0, 8));
        WorkCompletion first = c.poll(c.cqA);
        long elapsedNs = System.nanoTime() - t0;
        assertEquals(1, first.wrId());
        assertEquals(WcStatus.RETRY_EXC_ERR, first.status());
        WorkCompletion second = c.poll(c.cqA);
        assertEquals(2, second.wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, second.status(), "the requests behind the failed one are flushed");
        assertTrue(elapsedNs >= ackNs * (retries + 1), "not before ackTimeout x (retry + 1): " + elapsedNs);
        assertEquals(retries, soft(c.qpA).transportRetries(), "exactly retry_cnt retries");
        assertEquals(QpState.ERROR, c.qpA.state());
        assertEquals(QpState.RTS, c.qpB.state(), "nothing reached the responder");
        assertEquals(1, soft(c.qpB).postedReceives(), "the responder's receive is untouched");
    }

    @Test
    void linkDownAtTheResponderEndsRequestsInRetryExceeded() throws Exception {
        Connection c = connect(ackTimeout(5 * MS, 1));
        devB.faults().linkDown(true);
        assertEquals(Errno.OK, c.rdma(c.qpA, 7, Opcode.RDMA_WRITE, SIG, c.mrA, 0, 8, c.mrB.address(), c.mrB.rkey()));
        WorkCompletion w = c.poll(c.cqA);
        assertEquals(7, w.wrId());
        assertEquals(WcStatus.RETRY_EXC_ERR, w.status());
        assertEquals(1, soft(c.qpA).transportRetries());
    }

    @Test
    void linkFailingUnderAStalledSendEndsItInRetryExceeded() throws Exception {
        // rnr_retry 7 and no receive: the send stays in flight, retried on the RNR timer
        Connection.Options o = ackTimeout(10 * MS, 2).rnrRetry(7);
        Connection c = connect(o);
        SoftQueuePair qpA = soft(c.qpA);
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 8));
        Await.until(() -> qpA.rnrNaks() >= 1, "the send to stall on RNR");
        devA.faults().linkDown(true);
        WorkCompletion w = c.poll(c.cqA);
        assertEquals(1, w.wrId());
        assertEquals(WcStatus.RETRY_EXC_ERR, w.status(), "an in-flight request fails like a new one");
        assertEquals(2, qpA.transportRetries());
        assertEquals(Errno.OK, c.send(c.qpA, 2, Opcode.SEND, SIG, c.mrA, 0, 8));
        assertEquals(WcStatus.WR_FLUSH_ERR, c.poll(c.cqA).status(), "and the queue pair is in error");
    }

    @Test
    void restoringTheLinkBeforeRetriesRunOutLetsTheSendSucceed() throws Exception {
        // 7 retries of 50 ms: restored after the first, the send has ~300 ms of retries left
        Connection c = connect(ackTimeout(50 * MS, 7));
        SoftQueuePair qpA = soft(c.qpA);
        fill(c.mrA, 0, 32, 11);
        assertEquals(Errno.OK, c.recv(c.qpB, 60, c.mrB, 100, 64));
        devA.faults().linkDown(true);
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 32));
        Await.until(() -> qpA.transportRetries() >= 1, "a transport retry");
        c.expectNothing(c.cqB, 1);
        devA.faults().linkDown(false);
        WorkCompletion s = c.poll(c.cqA);
        assertEquals(WcStatus.SUCCESS, s.status());
        WorkCompletion r = c.poll(c.cqB);
        assertEquals(60, r.wrId());
        assertEquals(32, r.byteLen());
        assertFilled(c.mrB, 100, 32, 11, "delivered after the link came back");
        assertEquals(QpState.RTS, c.qpA.state());
        assertTrue(qpA.transportRetries() < 7, "succeeded before the retries ran out");
    }

    @Test
    void linkRestoredAfterTheLastRetryWentOutStillEndsInRetryExceeded() throws Exception {
        // retry_cnt 1: the send, one retry after 100 ms, then the error after another 100 ms. A link
        // restored after the retry is too late (reference B.2 "Transport retry"; rxe COMPST_ERROR_RETRY).
        Connection c = connect(ackTimeout(100 * MS, 1));
        SoftQueuePair qpA = soft(c.qpA);
        assertEquals(Errno.OK, c.recv(c.qpB, 60, c.mrB, 0, 64));
        devA.faults().linkDown(true);
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 8));
        Await.until(() -> qpA.transportRetries() >= 1, "the one retry");
        devA.faults().linkDown(false);
        WorkCompletion w = c.poll(c.cqA);
        assertEquals(WcStatus.RETRY_EXC_ERR, w.status(), "no retry is left after retry_cnt retries");
        assertEquals(1, qpA.transportRetries());
        assertEquals(1, soft(c.qpB).postedReceives(), "nothing was delivered");
    }

    @Test
    void unansweredSendIsRetriedWhenItsAckTimeoutExpiresNotWhenTheNextIsPosted() throws Exception {
        // A requester resends on its timer only: a later post, even on a link that is back, does not
        // resend the stalled request early, and does not overtake it.
        long ackNs = 300 * MS;
        Connection c = connect(ackTimeout(ackNs, 3));
        assertEquals(Errno.OK, c.recv(c.qpB, 60, c.mrB, 0, 64));
        assertEquals(Errno.OK, c.recv(c.qpB, 61, c.mrB, 64, 64));
        devA.faults().linkDown(true);
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 8));
        devA.faults().linkDown(false);
        assertEquals(Errno.OK, c.send(c.qpA, 2, Opcode.SEND, SIG, c.mrA, 0, 8));
        WorkCompletion first = c.poll(c.cqA);
        assertEquals(1, first.wrId());
        assertEquals(WcStatus.SUCCESS, first.status());
        assertTrue(System.nanoTime() - t0 >= ackNs, "resent when the ACK timeout expired, not before");
        assertEquals(2, c.poll(c.cqA).wrId());
        assertEquals(60, c.poll(c.cqB).wrId(), "delivered in posting order");
        assertEquals(61, c.poll(c.cqB).wrId());
        assertEquals(1, soft(c.qpA).transportRetries());
    }

    // ---------------------------------------------------------------- operation delay

    /** One attempt at posting with the operation delay and modifying the buffer right after the post. */
    private interface DelayedPost {
        /** Posts, then overwrites the source bytes; returns the time of the post (taken before it). */
        long postThenModify(Connection c) throws Exception;
    }

    /**
     * Runs {@code attempt} until the buffer was modified strictly inside the operation delay (the data
     * movement cannot have happened yet: it runs at post + delay or later); at most 3 attempts, each on a
     * new connection, so a stalled test machine does not fail the test.
     */
    private Connection delayed(DelayedPost attempt) throws Exception {
        return delayed(false, attempt);
    }

    /** As {@link #delayed(DelayedPost)}, delaying RDMA READs' data movement instead of whole operations. */
    private Connection delayed(boolean readsOnly, DelayedPost attempt) throws Exception {
        for (int i = 0; i < 3; i++) {
            Connection c = connect(new Connection.Options());
            if (readsOnly) {
                devA.faults().readDelayNs(OPERATION_DELAY_NS);
            } else {
                devA.faults().operationDelayNs(OPERATION_DELAY_NS);
            }
            long postedNs = attempt.postThenModify(c);
            boolean inside = System.nanoTime() - postedNs < OPERATION_DELAY_NS;
            devA.faults().clear();
            if (inside) {
                return c;
            }
            c.poll(c.cqA);
            c.close();
            conn = null;
        }
        fail("the test thread never got to modify the buffer within " + OPERATION_DELAY_NS + " ns");
        return null;
    }

    @Test
    void delayedSendCarriesTheBufferAsItIsAtExecutionNotAtPost() throws Exception {
        Connection c = delayed(x -> {
            fill(x.mrA, 0, 64, 1);
            assertEquals(Errno.OK, x.recv(x.qpB, 5, x.mrB, 0, 64));
            long t = System.nanoTime();
            assertEquals(Errno.OK, x.send(x.qpA, 1, Opcode.SEND, SIG, x.mrA, 0, 64));
            fill(x.mrA, 0, 64, 100);
            return t;
        });
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
        assertEquals(64, c.poll(c.cqB).byteLen());
        assertFilled(c.mrB, 0, 64, 100, "the bytes written after the post arrive");
    }

    @Test
    void delayedInlineSendCarriesTheBytesOfPostTime() throws Exception {
        Connection c = delayed(x -> {
            fill(x.mrA, 0, 64, 1);
            assertEquals(Errno.OK, x.recv(x.qpB, 5, x.mrB, 0, 64));
            long t = System.nanoTime();
            assertEquals(Errno.OK, x.send(x.qpA, 1, Opcode.SEND, SIG | SendFlags.INLINE, x.mrA, 0, 64));
            fill(x.mrA, 0, 64, 100);
            return t;
        });
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
        assertEquals(64, c.poll(c.cqB).byteLen());
        assertFilled(c.mrB, 0, 64, 1, "inline data is copied at post");
    }

    @Test
    void delayedRdmaWriteCarriesTheBufferAsItIsAtExecution() throws Exception {
        Connection c = delayed(x -> {
            fill(x.mrA, 0, 48, 1);
            long t = System.nanoTime();
            assertEquals(Errno.OK, x.rdma(x.qpA, 1, Opcode.RDMA_WRITE, SIG, x.mrA, 0, 48, x.mrB.address() + 512,
                x.mrB.rkey()));
            fill(x.mrA, 0, 48, 100);
            return t;
        });
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
        assertFilled(c.mrB, 512, 48, 100, "the bytes written after the post arrive");
    }

    @Test
    void delayedInlineRdmaWriteCarriesTheBytesOfPostTime() throws Exception {
        Connection c = delayed(x -> {
            fill(x.mrA, 0, 48, 1);
            long t = System.nanoTime();
            assertEquals(Errno.OK, x.rdma(x.qpA, 1, Opcode.RDMA_WRITE, SIG | SendFlags.INLINE, x.mrA, 0, 48,
                x.mrB.address() + 512, x.mrB.rkey()));
            fill(x.mrA, 0, 48, 100);
            return t;
        });
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
        assertFilled(c.mrB, 512, 48, 1, "inline data is copied at post");
    }

    @Test
    void sendRegionDeregisteredBeforeTheDelayedSendExecutesFailsWithLocalProtectionError() throws Exception {
        MemoryRegion[] source = new MemoryRegion[1];
        Connection c = delayed(x -> {
            source[0] = x.pdA.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            assertEquals(Errno.OK, x.recv(x.qpB, 5, x.mrB, 0, 64));
            long t = System.nanoTime();
            assertEquals(Errno.OK, x.send(x.qpA, 1, Opcode.SEND, SIG, source[0], 0, 64));
            source[0].close();
            return t;
        });
        WorkCompletion w = c.poll(c.cqA);
        assertEquals(1, w.wrId());
        assertEquals(WcStatus.LOC_PROT_ERR, w.status(), "a local region must still be registered when the request runs");
        assertEquals(QpState.ERROR, c.qpA.state());
        c.expectNothing(c.cqB, 5);
    }

    @Test
    void delayedReadIntoASinkDeregisteredMeanwhileFailsWithLocalProtectionError() throws Exception {
        // rxe re-validates the sink MR when the READ response lands (rxe_recheck_mr): the bytes must not
        // reach memory the application deregistered.
        MemoryRegion[] sink = new MemoryRegion[1];
        Connection c = delayed(true, x -> {
            fill(x.mrB, 0, 32, 9);
            sink[0] = x.pdA.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE);
            long t = System.nanoTime();
            assertEquals(Errno.OK, x.rdma(x.qpA, 1, Opcode.RDMA_READ, SIG, sink[0], 0, 32, x.mrB.address(),
                x.mrB.rkey()));
            sink[0].close();
            return t;
        });
        WorkCompletion w = c.poll(c.cqA);
        assertEquals(1, w.wrId());
        assertEquals(WcStatus.LOC_PROT_ERR, w.status());
        for (int i = 0; i < 32; i++) {
            assertEquals(0, sink[0].buffer().get(i), "the deregistered sink is untouched, byte " + i);
        }
    }

    // ---------------------------------------------------------------- connection manager

    /** The passive half of a connect: takes the request, creates B's queue pair, accepts. */
    private static void acceptOnB(Connection c) throws Exception {
        CmEvent req = expectEvent(c.evB, CmEventType.CONNECT_REQUEST);
        c.idB = req.id();
        c.qpB = c.idB.createQueuePair(c.pdB, new QueuePairAttributes().sendCq(c.cqB).recvCq(c.cqB));
        c.idB.accept(new ConnectionParameters());
    }

    @Test
    void lostEstablishedEventLeavesOnlyTheActiveSideWithoutIt() throws Exception {
        conn = Connection.prepare(devA, devB, new Connection.Options());
        Connection c = conn;
        devA.faults().loseCmEvents(CmEventType.ESTABLISHED, 1);
        c.idA.connect(new ConnectionParameters());
        acceptOnB(c);
        assertSame(c.idB, expectEvent(c.evB, CmEventType.ESTABLISHED).id(), "the passive side is told");
        assertNull(c.evA.poll(100 * MS), "the active side's ESTABLISHED was lost");
        // The connection itself is up: only the event went missing.
        assertEquals(QpState.RTS, c.qpA.state());
        fill(c.mrA, 0, 16, 7);
        assertEquals(Errno.OK, c.recv(c.qpB, 1, c.mrB, 0, 16));
        assertEquals(Errno.OK, c.send(c.qpA, 2, Opcode.SEND, SIG, c.mrA, 0, 16));
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqB).status());
        // One event was to be lost: the disconnect comes through.
        c.idB.disconnect();
        expectEvent(c.evA, CmEventType.DISCONNECTED);
    }

    @Test
    void delayedCmEventsArriveNoSoonerThanTheDelay() throws Exception {
        long delayNs = 100 * MS;
        conn = Connection.prepare(devA, devB, new Connection.Options());
        Connection c = conn;
        devA.faults().cmEventDelayNs(delayNs);
        long t0 = System.nanoTime();
        c.idA.connect(new ConnectionParameters());
        acceptOnB(c);
        expectEvent(c.evB, CmEventType.ESTABLISHED);
        CmEvent est = expectEvent(c.evA, CmEventType.ESTABLISHED);
        assertSame(c.idA, est.id());
        assertTrue(System.nanoTime() - t0 >= delayNs, "not before the delay");
        assertNull(c.evB.poll(0), "the passive device has no delay and no second event");
    }

    @Test
    void droppedConnectRequestEndsUnreachableAfterTheConnectTimeout() throws Exception {
        conn = Connection.prepare(devA, devB, new Connection.Options());
        Connection c = conn;
        devA.faults().dropConnectRequests(true);
        long t0 = System.nanoTime();
        c.idA.connect(new ConnectionParameters().connectTimeoutMs(100));
        CmEvent e = expectEvent(c.evA, CmEventType.UNREACHABLE);
        assertTrue(System.nanoTime() - t0 >= 100 * MS, "not before the connect timeout");
        assertSame(c.idA, e.id());
        assertEquals(-Errno.ETIMEDOUT, e.status());
        assertNull(c.evB.poll(20 * MS), "the request never reached the listener");
    }
}
