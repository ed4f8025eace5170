package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The queue-pair path across processes, with both ends in this JVM: two host-fabric devices whose
 * queue pairs are connected through their wires (openWire / connectRemote, as the connection manager
 * does), so every message, answer and one-sided copy takes the shared-memory path.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class XpQueuePairTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);

    private SoftDevice devA;
    private SoftDevice devB;
    private Side a;
    private Side b;

    /** One end: its objects, a 64 KiB device-memory region. */
    static final class Side {
        final SoftDevice dev;
        final SoftProtectionDomain pd;
        final CompletionChannel ch;
        final SoftCompletionQueue cq;
        final SoftQueuePair qp;
        final DeviceMemory mem;
        final MemoryRegion mr;
        final WorkCompletion[] wc = {new WorkCompletion()};

        Side(SoftDevice dev, int minRnrMs) throws Exception {
            this(dev, minRnrMs, 64 * 1024);
        }

        Side(SoftDevice dev, int minRnrMs, int memoryBytes) throws Exception {
            this.dev = dev;
            pd = (SoftProtectionDomain) dev.allocateProtectionDomain();
            ch = dev.createCompletionChannel();
            cq = (SoftCompletionQueue) dev.createCompletionQueue(ch, 256);
            qp = new SoftQueuePair(dev, pd, new QueuePairAttributes().sendCq(cq).recvCq(cq).maxSendWr(16).maxRecvWr(16)
                .maxInlineData(64).ackTimeoutNs(TimeUnit.MILLISECONDS.toNanos(10))
                .minRnrTimerNs(TimeUnit.MILLISECONDS.toNanos(minRnrMs)));
            mem = dev.allocateMemory(memoryBytes);
            mr = pd.register(mem.buffer(), Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
        }

        int send(long wrId, Opcode op, int flags, int offset, int length, long raddr, int rkey) {
            SendWorkRequest r = new SendWorkRequest().wrId(wrId).opcode(op).flags(flags).remote(raddr, rkey);
            if (length > 0) {
                r.sge(0, mr.address() + offset, length, mr.lkey());
            }
            return qp.postSend(r);
        }

        int recv(long wrId, int offset, int length) {
            return qp.postRecv(new ReceiveWorkRequest().wrId(wrId).sge(0, mr.address() + offset, length, mr.lkey()));
        }

        WorkCompletion poll() {
            long deadline = System.nanoTime() + WAIT_NS;
            while (System.nanoTime() < deadline) {
                int n = cq.poll(wc, 1);
                assertTrue(n >= 0, "poll: " + Errno.name(n));
                if (n == 1) {
                    WorkCompletion c = new WorkCompletion();
                    WorkCompletion w = wc[0];
                    c.set(w.wrId(), w.status(), w.opcode(), w.byteLen(), w.immData(), w.flags(), w.qpNumber());
                    return c;
                }
                Thread.onSpinWait();
            }
            fail("no completion within 5 s");
            return null;
        }

        void expectNothing(long ms) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
            while (System.nanoTime() < deadline) {
                int n = cq.poll(wc, 1);
                if (n != 0) {
                    fail("unexpected completion: " + (n > 0 ? wc[0] : Errno.name(n)));
                }
                Thread.sleep(1);
            }
        }
    }

    @BeforeEach
    void open() {
        devA = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY);
        devB = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY);
    }

    @AfterEach
    void close() {
        devA.close();
        devB.close();
        assertEquals(null, devA.agentFailure());
        assertEquals(null, devB.agentFailure());
    }

    private void connect(int rnrRetry) throws Exception {
        connect(rnrRetry, 64 * 1024);
    }

    private void connect(int rnrRetry, int memoryBytes) throws Exception {
        a = new Side(devA, 1, memoryBytes);
        b = new Side(devB, 1, memoryBytes);
        NodeId me = NodeId.current();
        XpEndpoint ea = a.qp.openWire();
        XpEndpoint eb = b.qp.openWire();
        ConnectionParameters p = new ConnectionParameters().retryCount(2).rnrRetryCount(rnrRetry);
        b.qp.connectRemote(me, ea, p);
        a.qp.connectRemote(me, eb, p);
        assertEquals(QpState.RTS, a.qp.state());
        assertEquals(QpState.RTS, b.qp.state());
    }

    private static void fill(MemoryRegion mr, int off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            mr.buffer().put(off + i, (byte) (seed + 7 * i));
        }
    }

    private static void assertFilled(MemoryRegion mr, int off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            assertEquals((byte) (seed + 7 * i), mr.buffer().get(off + i), "byte " + i);
        }
    }

    @Test
    void sendsShortAndLongMessagesBothWays() throws Exception {
        connect(0);
        for (int len : new int[] {0, 1, 64, 96, 97, 4096, 60_000}) {
            fill(a.mr, 0, len, len);
            assertEquals(Errno.OK, b.recv(len, 0, 64 * 1024));
            assertEquals(Errno.OK, a.send(100 + len, Opcode.SEND_WITH_IMM, SendFlags.SIGNALED, 0, len, 0, 0));
            WorkCompletion r = b.poll();
            assertEquals(WcStatus.SUCCESS, r.status());
            assertEquals(WcOpcode.RECV, r.opcode());
            assertEquals(len, r.wrId());
            assertEquals(len, r.byteLen());
            assertEquals(b.qp.qpNumber(), r.qpNumber());
            assertFilled(b.mr, 0, len, len);
            WorkCompletion s = a.poll();
            assertEquals(WcStatus.SUCCESS, s.status());
            assertEquals(100 + len, s.wrId());
            // and back
            assertEquals(Errno.OK, a.recv(7, 1000, 200));
            fill(b.mr, 50_000, 10, 3);
            assertEquals(Errno.OK, b.send(8, Opcode.SEND, SendFlags.SIGNALED, 50_000, 10, 0, 0));
            assertEquals(10, a.poll().byteLen());
            assertFilled(a.mr, 1000, 10, 3);
            assertEquals(8, b.poll().wrId());
        }
    }

    /**
     * The quiet check a selector makes instead of polling an idle queue pair (issue 27) finds what a
     * poll would: a message published and not taken, a completion not polled, a send in flight when
     * sends count.
     */
    @Test
    void quietCheckFindsWhatAPollWould() throws Exception {
        connect(0);
        assertTrue(a.qp.xpQuiet(true) && b.qp.xpQuiet(true), "a new link holds nothing");
        assertEquals(Errno.OK, b.recv(1, 0, 1024));
        fill(a.mr, 0, 64, 9);
        assertEquals(Errno.OK, a.send(2, Opcode.SEND, SendFlags.SIGNALED, 0, 64, 0, 0));
        assertTrue(!b.qp.xpQuiet(false), "the message is published (or taken into the queue) and not polled");
        assertTrue(!a.qp.xpQuiet(true), "a send in flight counts when sends do");
        WorkCompletion r = b.poll();
        assertEquals(WcOpcode.RECV, r.opcode());
        assertTrue(b.qp.xpQuiet(false), "polled: nothing left");
        assertEquals(2, a.poll().wrId());
        assertTrue(a.qp.xpQuiet(true), "answered and polled: nothing in flight");
        io.jsdp.verbs.WakeChannel wc = b.qp.wakeChannel();
        if (wc != null) {
            assertTrue(wc.quiet(true), "the wake channel asks its queue pair");
            assertEquals(Errno.OK, b.recv(3, 0, 1024));
            assertEquals(Errno.OK, a.send(4, Opcode.SEND, 0, 0, 8, 0, 0));
            assertTrue(!wc.quiet(false), "the wake channel sees the message too");
            assertEquals(3, b.poll().wrId());
        }
    }

    /**
     * A waiter that arms several wake channels for one wait (a selector) is rung once by the peer,
     * however many of its queue pairs the peer writes to; each arm the peer took says so at the
     * disarm. Arms of different waits are each rung.
     */
    @Test
    void onePeerRingsAWaitOnceWhateverItsChannels() throws Exception {
        connect(0);
        Side a2 = new Side(devA, 1);
        Side b2 = new Side(devB, 1);
        NodeId me = NodeId.current();
        XpEndpoint ea = a2.qp.openWire();
        XpEndpoint eb = b2.qp.openWire();
        ConnectionParameters p = new ConnectionParameters().retryCount(2).rnrRetryCount(0);
        b2.qp.connectRemote(me, ea, p);
        a2.qp.connectRemote(me, eb, p);
        a.qp.openDirect(); // as the connection manager's active side does
        a2.qp.openDirect();
        io.jsdp.verbs.WakeChannel w1 = b.qp.wakeChannel();
        io.jsdp.verbs.WakeChannel w2 = b2.qp.wakeChannel();
        assertNotNull(w1);
        assertNotNull(w2);
        Object waiter = new Object();
        long deadline = System.nanoTime() + WAIT_NS;
        while (!(w1.claim(waiter) && w2.claim(waiter))) { // usable once the peer confirmed the connection
            assertTrue(System.nanoTime() < deadline, "wake channels not usable within 5 s");
            Thread.sleep(1);
        }
        try (java.nio.channels.Selector sel = java.nio.channels.Selector.open()) {
            w1.channel().register(sel, java.nio.channels.SelectionKey.OP_READ);
            w2.channel().register(sel, java.nio.channels.SelectionKey.OP_READ);
            int wait = io.jsdp.verbs.WakeChannel.newWait();
            w1.arm(false, wait);
            w2.arm(false, wait);
            oneMessage(a, b, 1);
            oneMessage(a2, b2, 2);
            assertEquals(1, readable(sel), "one ring for the wait");
            assertTrue(w1.disarm() && w2.disarm(), "both arms taken");
            w1.drain();
            w2.drain();

            w1.arm(false, io.jsdp.verbs.WakeChannel.newWait());
            w2.arm(false, io.jsdp.verbs.WakeChannel.newWait());
            oneMessage(a, b, 3);
            oneMessage(a2, b2, 4);
            deadline = System.nanoTime() + WAIT_NS;
            int n;
            while ((n = readable(sel)) < 2 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(2, n, "two waits: two rings");
            assertTrue(w1.disarm() && w2.disarm(), "both arms taken");
        } finally {
            w1.release(waiter);
            w2.release(waiter);
        }
    }

    /** One message from {@code from} to {@code to}, received there (its receive's id {@code id}). */
    private static void oneMessage(Side from, Side to, long id) {
        assertEquals(Errno.OK, to.recv(id, 0, 1024));
        assertEquals(Errno.OK, from.send(100 + id, Opcode.SEND, 0, 0, 8, 0, 0));
        assertEquals(id, to.poll().wrId());
    }

    /** The channels of {@code sel} with a ring to read, after the ring had time to arrive. */
    private static int readable(java.nio.channels.Selector sel) throws Exception {
        Thread.sleep(50);
        sel.selectedKeys().clear();
        return sel.selectNow();
    }

    @Test
    void streamsManyMessagesInOrderThroughTheDataArea() throws Exception {
        connect(7);
        int n = 2_000;
        int len = 20_000;
        int posted = 0;
        int received = 0;
        int sent = 0;
        int completed = 0;
        while (received < n) {
            while (posted < n && posted - received < 16) {
                assertEquals(Errno.OK, b.recv(posted, (posted % 3) * len, len));
                posted++;
            }
            while (sent < n && sent - completed < 16) {
                a.mr.buffer().putInt(0, sent);
                int rc = a.send(sent, Opcode.SEND, SendFlags.SIGNALED, 0, len, 0, 0);
                if (rc == Errno.ENOMEM) {
                    break;
                }
                assertEquals(Errno.OK, rc);
                sent++;
            }
            int m = a.cq.poll(a.wc, 1);
            if (m == 1) {
                assertEquals(WcStatus.SUCCESS, a.wc[0].status());
                assertEquals(completed, a.wc[0].wrId());
                completed++;
            }
            m = b.cq.poll(b.wc, 1);
            if (m == 1) {
                assertEquals(WcStatus.SUCCESS, b.wc[0].status());
                assertEquals(received, b.wc[0].wrId());
                received++;
            }
        }
        assertTrue(completed <= n);
    }

    @Test
    void rdmaWriteAndReadReachPeerDeviceMemoryOneSided() throws Exception {
        connect(7);
        fill(a.mr, 0, 5000, 9);
        assertEquals(Errno.OK, a.send(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 5000, b.mr.address() + 100, b.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, a.poll().status());
        assertFilled(b.mr, 100, 5000, 9);
        fill(b.mr, 30_000, 3000, 4);
        assertEquals(Errno.OK, a.send(2, Opcode.RDMA_READ, SendFlags.SIGNALED, 10_000, 3000, b.mr.address() + 30_000,
            b.mr.rkey()));
        WorkCompletion c = a.poll();
        assertEquals(WcStatus.SUCCESS, c.status());
        assertEquals(WcOpcode.RDMA_READ, c.opcode());
        assertFilled(a.mr, 10_000, 3000, 4);
        // with immediate: consumes a receive at B
        assertEquals(Errno.OK, b.recv(5, 0, 16));
        assertEquals(Errno.OK, a.send(3, Opcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED, 0, 64,
            b.mr.address() + 40_000, b.mr.rkey()));
        a.qp.postSend(new SendWorkRequest().wrId(4).opcode(Opcode.RDMA_WRITE_WITH_IMM).flags(0).immData(77)
            .remote(b.mr.address(), b.mr.rkey()));
        WorkCompletion r = b.poll();
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, r.opcode());
        assertEquals(64, r.byteLen());
        assertFilled(b.mr, 40_000, 64, 9);
        assertEquals(3, a.poll().wrId());
        b.expectNothing(5); // the second needs a receive
        assertEquals(Errno.OK, b.recv(6, 0, 16));
        WorkCompletion r2 = b.poll();
        assertEquals(77, r2.immData());
    }

    @Test
    void badRkeyFailsBothSides() throws Exception {
        connect(0);
        assertEquals(Errno.OK, b.recv(1, 0, 16));
        assertEquals(Errno.OK, a.send(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, b.mr.address(), b.mr.rkey() ^ 1));
        assertEquals(WcStatus.REM_ACCESS_ERR, a.poll().status());
        assertEquals(QpState.ERROR, a.qp.state());
        WorkCompletion flushed = b.poll();
        assertEquals(WcStatus.WR_FLUSH_ERR, flushed.status());
        assertEquals(QpState.ERROR, b.qp.state());
    }

    @Test
    void nonDeviceMemoryIsRefusedAcrossProcesses() throws Exception {
        // HOST_ONLY devices behave as if in two processes: only device memory is reachable.
        connect(0);
        MemoryRegion plain = b.pd.register(ByteBuffer.allocateDirect(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        try {
            assertEquals(Errno.OK, a.send(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, plain.address(), plain.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, a.poll().status());
        } finally {
            plain.close();
        }
    }

    @Test
    void hostDevicesOfOneProcessReachAnyRegionOfEachOther() throws Exception {
        devA.close();
        devB.close();
        devA = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        devB = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        connect(0);
        ByteBuffer heap = ByteBuffer.allocateDirect(4096); // plain direct memory, not device memory
        MemoryRegion plain = b.pd.register(heap, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
        try {
            fill(a.mr, 0, 64, 3);
            assertEquals(Errno.OK, a.send(1, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 64, plain.address() + 100,
                plain.rkey()));
            assertEquals(WcStatus.SUCCESS, a.poll().status());
            for (int i = 0; i < 64; i++) {
                assertEquals((byte) (3 + 7 * i), heap.get(100 + i), "byte " + i + " written into plain memory");
            }
            assertEquals(Errno.OK, a.send(2, Opcode.RDMA_READ, SendFlags.SIGNALED, 1000, 64, plain.address() + 100,
                plain.rkey()));
            assertEquals(WcStatus.SUCCESS, a.poll().status());
            assertFilled(a.mr, 1000, 64, 3);
            assertEquals(Errno.OK, a.send(3, Opcode.RDMA_WRITE, SendFlags.SIGNALED, 0, 8, plain.address() + 4090,
                plain.rkey()));
            assertEquals(WcStatus.REM_ACCESS_ERR, a.poll().status(), "bounds are still checked");
        } finally {
            plain.close();
        }
    }

    @Test
    void rnrRetriesExhaustThenFlush() throws Exception {
        connect(2);
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, a.send(1, Opcode.SEND, SendFlags.SIGNALED, 0, 10, 0, 0));
        assertEquals(Errno.OK, a.send(2, Opcode.SEND, SendFlags.SIGNALED, 0, 10, 0, 0));
        WorkCompletion f = a.poll();
        long took = System.nanoTime() - t0;
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, f.status());
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(2), "failed after " + took + " ns, before 2 RNR timers");
        assertEquals(WcStatus.WR_FLUSH_ERR, a.poll().status());
        assertEquals(QpState.RTS, b.qp.state());
        assertEquals(Errno.OK, b.recv(3, 0, 64));
        b.expectNothing(20);
    }

    @Test
    void rnrIsDeliveredWhenReceiveArrives() throws Exception {
        connect(7);
        fill(a.mr, 0, 32, 5);
        assertEquals(Errno.OK, a.send(1, Opcode.SEND, SendFlags.SIGNALED, 0, 32, 0, 0));
        a.expectNothing(20);
        assertEquals(Errno.OK, b.recv(9, 0, 64));
        assertEquals(WcStatus.SUCCESS, a.poll().status());
        assertFilled(b.mr, 0, 32, 5);
        assertEquals(9, b.poll().wrId());
    }

    /**
     * A receive posted just as the requester's RNR retries run out: the send either succeeds and the
     * message is delivered, or fails with RNR_RETRY_EXC_ERR and nothing is delivered — never one
     * without the other (the responder decides, the requester waits for its verdict).
     */
    @Test
    void rnrWithdrawalAgreesWithDelivery() throws Exception {
        int delivered = 0;
        int refused = 0;
        // Each round posts later; go on until both outcomes were seen (a loaded machine needs more rounds).
        for (int round = 0; round < 200 && (delivered < 3 || refused < 3); round++) {
            connect(1);
            assertEquals(Errno.OK, a.send(1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0, 0));
            // the RNR timer is 1 ms and one retry is allowed: post the receive around when it runs out
            long until = System.nanoTime() + 200_000 + round * 100_000L;
            while (System.nanoTime() < until) {
                b.cq.poll(b.wc, 0);
            }
            assertEquals(Errno.OK, b.recv(2, 0, 64));
            WorkCompletion s = a.poll();
            if (s.status() == WcStatus.SUCCESS) {
                WorkCompletion r = b.poll();
                assertEquals(WcStatus.SUCCESS, r.status(), "round " + round);
                delivered++;
            } else {
                assertEquals(WcStatus.RNR_RETRY_EXC_ERR, s.status(), "round " + round);
                b.expectNothing(5);
                assertEquals(QpState.RTS, b.qp.state());
                refused++;
            }
            a.qp.close();
            b.qp.close();
        }
        assertTrue(delivered >= 3 && refused >= 3, "both outcomes: delivered " + delivered + ", refused " + refused);
    }

    /** A message longer than what is left of the data area before its end waits for nothing. */
    @Test
    void longMessagesFitWhateverWhereTheDataAreaStands() throws Exception {
        connect(7, 1 << 20);
        int cap = XpEngine.wireBytes();
        for (int len : new int[] {cap * 6 / 10, cap * 7 / 10, cap, cap / 3, cap}) {
            fill(a.mr, 0, len, len);
            assertEquals(Errno.OK, b.recv(len, 0, 1 << 20));
            assertEquals(Errno.OK, a.send(len, Opcode.SEND, SendFlags.SIGNALED, 0, len, 0, 0));
            WorkCompletion r = b.poll();
            assertEquals(len, r.byteLen());
            assertFilled(b.mr, 0, len, len);
            assertEquals(WcStatus.SUCCESS, a.poll().status());
        }
    }

    /** A responder that goes to ERROR while our message waits RNR-marked: transport retry, as in one JVM. */
    @Test
    void responderErrorWhileRnrMarkedEndsInTransportRetry() throws Exception {
        for (int rnr : new int[] {6, 7}) {
            connect(rnr);
            assertEquals(Errno.OK, a.send(1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0, 0));
            b.expectNothing(3); // b's polls mark it RNR
            b.qp.modify(QpState.ERROR);
            WorkCompletion c = a.poll();
            assertEquals(WcStatus.RETRY_EXC_ERR, c.status(), "rnr retry " + rnr);
            a.qp.close();
            b.qp.close();
        }
    }

    /** Closed connections do not keep the peer's segments mapped (their shared memory stays pinned while mapped). */
    @Test
    void closedLinksUnmapPeerSegments() throws Exception {
        for (int i = 0; i < 10; i++) {
            connect(7);
            a.qp.close();
            b.qp.close();
            assertEquals(0, devA.xp().mappedPeerSegments(), "round " + i);
            assertEquals(0, devB.xp().mappedPeerSegments(), "round " + i);
        }
    }

    @Test
    void receiveTooSmall() throws Exception {
        connect(0);
        assertEquals(Errno.OK, b.recv(1, 0, 4));
        assertEquals(Errno.OK, a.send(1, Opcode.SEND, SendFlags.SIGNALED, 0, 200, 0, 0));
        assertEquals(WcStatus.REM_INV_REQ_ERR, a.poll().status());
        assertEquals(WcStatus.LOC_LEN_ERR, b.poll().status());
    }

    @Test
    void destroyedPeerTimesOut() throws Exception {
        connect(0);
        b.qp.close();
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, a.send(1, Opcode.SEND, SendFlags.SIGNALED, 0, 8, 0, 0));
        WorkCompletion f = a.poll();
        assertEquals(WcStatus.RETRY_EXC_ERR, f.status());
        long took = System.nanoTime() - t0;
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(30), "retry exceeded after " + took + " ns, before 3 timeouts");
    }

    @Test
    void blockingWaitIsWokenThroughTheProgressThread() throws Exception {
        connect(0);
        assertEquals(Errno.OK, b.recv(1, 0, 64));
        assertEquals(Errno.OK, b.cq.requestNotify(false));
        assertEquals(0, b.cq.poll(b.wc, 1));
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            a.send(1, Opcode.SEND, 0, 0, 8, 0, 0);
        });
        t.start();
        assertNotNull(b.ch.await(WAIT_NS));
        b.cq.acknowledgeEvents(1);
        assertEquals(1, b.cq.poll(b.wc, 1));
        t.join();
    }

    /**
     * A message arrives while another thread holds the responder's lock, as an application polling its
     * queue does: the progress thread, woken for it, does not spin on the lock (it once looked again at
     * once, a whole CPU taken from the pollers), and once the lock is free it still delivers the message.
     */
    @Test
    void progressThreadWaitsRatherThanSpinsOnAHeldLockAndStillDelivers() throws Exception {
        connect(0);
        assertEquals(Errno.OK, b.recv(1, 0, 64));
        assertEquals(Errno.OK, b.cq.requestNotify(false)); // b's progress thread covers the queue
        Thread progress = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals("jsdp-" + devB.name() + "-progress")).findFirst().orElseThrow();
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        assertTrue(mx.isThreadCpuTimeSupported(), "thread CPU time is needed for this check");
        QpLock held = b.qp.receiveLock();
        held.lock();
        long holdNs = TimeUnit.MILLISECONDS.toNanos(600);
        long cpuBefore;
        long cpuAfter;
        try {
            assertEquals(Errno.OK, a.send(1, Opcode.SEND, 0, 0, 8, 0, 0)); // rings b's doorbell
            cpuBefore = mx.getThreadCpuTime(progress.getId());
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(holdNs));
            cpuAfter = mx.getThreadCpuTime(progress.getId());
        } finally {
            held.unlock();
        }
        long used = cpuAfter - cpuBefore;
        assertTrue(used < holdNs / 3, "the progress thread used " + TimeUnit.NANOSECONDS.toMillis(used)
            + " ms of CPU in " + TimeUnit.NANOSECONDS.toMillis(holdNs) + " ms while the lock was held");
        assertNotNull(b.ch.await(WAIT_NS), "the message was not delivered once the lock was free");
        b.cq.acknowledgeEvents(1);
        WorkCompletion c = b.poll();
        assertEquals(WcStatus.SUCCESS, c.status());
        assertEquals(WcOpcode.RECV, c.opcode());
        assertEquals(8, c.byteLen());
    }
}
