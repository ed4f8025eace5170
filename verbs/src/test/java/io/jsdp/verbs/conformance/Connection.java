package io.jsdp.verbs.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Test fixture: two queue pairs connected through the connection manager, A the active side on
 * device {@code a}, B the passive side on device {@code b}, each with its own completion queue and a
 * 64 KiB region registered for local write, remote write and remote read. Written against the port
 * only, so every device runs it unchanged.
 *
 * <p>Each region is device memory ({@link RdmaDevice#allocateMemory}), not a plain direct buffer: it
 * is the memory a device promises its peers can reach even in another process (for SoftRdma, a
 * shared-memory segment), so the fixture also serves a peer in another JVM.
 */
public final class Connection implements AutoCloseable {
    /** Region size on each side. */
    public static final int REGION_BYTES = 64 * 1024;
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);

    /** The active side's device. */
    public final RdmaDevice a;
    /** The passive side's device. */
    public final RdmaDevice b;
    /** Side A's objects. */
    public ProtectionDomain pdA;
    /** Side B's objects. */
    public ProtectionDomain pdB;
    /** Completion channels. */
    public CompletionChannel chA;
    /** Completion channels. */
    public CompletionChannel chB;
    /** One completion queue per side, for sends and receives. */
    public CompletionQueue cqA;
    /** One completion queue per side, for sends and receives. */
    public CompletionQueue cqB;
    /** CM event channels. */
    public CmEventChannel evA;
    /** CM event channels. */
    public CmEventChannel evB;
    /** The listener on B. */
    public CmId listener;
    /** A's id. */
    public CmId idA;
    /** B's id for this connection. */
    public CmId idB;
    /** The queue pairs. */
    public QueuePair qpA;
    /** The queue pairs. */
    public QueuePair qpB;
    /** The registered regions. */
    public MemoryRegion mrA;
    /** The registered regions. */
    public MemoryRegion mrB;
    /** The device memory under {@link #mrA}. */
    public DeviceMemory dmA;
    /** The device memory under {@link #mrB}. */
    public DeviceMemory dmB;

    private final SendWorkRequest swr = new SendWorkRequest();
    private final ReceiveWorkRequest rwr = new ReceiveWorkRequest();
    private final WorkCompletion[] wc = {new WorkCompletion()};

    private Connection(RdmaDevice a, RdmaDevice b) {
        this.a = a;
        this.b = b;
    }

    /** Options of a connection. */
    public static final class Options {
        int cqEntries = 256;
        QueuePairAttributes attrsA = defaults();
        QueuePairAttributes attrsB = defaults();
        ConnectionParameters connect = new ConnectionParameters().retryCount(2).rnrRetryCount(0);
        ConnectionParameters accept = new ConnectionParameters().retryCount(2).rnrRetryCount(0);

        private static QueuePairAttributes defaults() {
            return new QueuePairAttributes().maxSendWr(16).maxRecvWr(16).maxInlineData(64)
                .ackTimeoutNs(TimeUnit.MILLISECONDS.toNanos(20)).minRnrTimerNs(TimeUnit.MILLISECONDS.toNanos(1));
        }

        /**
         * Sets the completion-queue size of both sides.
         *
         * @param n entries
         * @return this
         */
        public Options cqEntries(int n) {
            cqEntries = n;
            return this;
        }

        /**
         * The attributes of A's queue pair (completion queues are filled in).
         *
         * @return the attributes to adjust
         */
        public QueuePairAttributes attrsA() {
            return attrsA;
        }

        /**
         * The attributes of B's queue pair.
         *
         * @return the attributes to adjust
         */
        public QueuePairAttributes attrsB() {
            return attrsB;
        }

        /**
         * Sets the RNR retry count of both sides.
         *
         * @param n 0..7
         * @return this
         */
        public Options rnrRetry(int n) {
            connect.rnrRetryCount(n);
            accept.rnrRetryCount(n);
            return this;
        }

        /**
         * Sets the transport retry count of both sides.
         *
         * @param n 0..7
         * @return this
         */
        public Options retry(int n) {
            connect.retryCount(n);
            accept.retryCount(n);
            return this;
        }
    }

    /**
     * Creates the objects of both sides, A's queue pair left in INIT, not connected.
     *
     * @param a A's device
     * @param b B's device
     * @param o options
     * @return the unconnected fixture
     * @throws Exception on failure
     */
    public static Connection prepare(RdmaDevice a, RdmaDevice b, Options o) throws Exception {
        Connection c = new Connection(a, b);
        try {
            c.pdA = a.allocateProtectionDomain();
            c.pdB = b.allocateProtectionDomain();
            c.chA = a.createCompletionChannel();
            c.chB = b.createCompletionChannel();
            c.cqA = a.createCompletionQueue(c.chA, o.cqEntries);
            c.cqB = b.createCompletionQueue(c.chB, o.cqEntries);
            int rw = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ;
            c.dmA = a.allocateMemory(REGION_BYTES);
            c.dmB = b.allocateMemory(REGION_BYTES);
            c.mrA = c.pdA.register(c.dmA.buffer(), rw);
            c.mrB = c.pdB.register(c.dmB.buffer(), rw);
            c.evA = a.createEventChannel();
            c.evB = b.createEventChannel();
            c.listener = b.createId(c.evB);
            c.listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            c.listener.listen(8);
            c.idA = a.createId(c.evA);
            c.idA.resolveAddress(c.listener.localAddress(), 1000);
            expectEvent(c.evA, CmEventType.ADDR_RESOLVED);
            c.idA.resolveRoute(1000);
            expectEvent(c.evA, CmEventType.ROUTE_RESOLVED);
            c.qpA = c.idA.createQueuePair(c.pdA, o.attrsA.sendCq(c.cqA).recvCq(c.cqA));
            return c;
        } catch (Exception | AssertionError e) {
            c.close();
            throw e;
        }
    }

    /**
     * Creates both sides and connects them.
     *
     * @param a A's device
     * @param b B's device
     * @param o options
     * @return the connected fixture
     * @throws Exception on failure
     */
    public static Connection open(RdmaDevice a, RdmaDevice b, Options o) throws Exception {
        Connection c = prepare(a, b, o);
        try {
            c.connect(o);
            return c;
        } catch (Exception | AssertionError e) {
            c.close();
            throw e;
        }
    }

    private void connect(Options o) throws Exception {
        idA.connect(o.connect);
        CmEvent req = expectEvent(evB, CmEventType.CONNECT_REQUEST);
        idB = req.id();
        qpB = idB.createQueuePair(pdB, o.attrsB.sendCq(cqB).recvCq(cqB));
        idB.accept(o.accept);
        expectEvent(evA, CmEventType.ESTABLISHED);
        expectEvent(evB, CmEventType.ESTABLISHED);
    }

    /**
     * Waits for the next event on a channel and checks its type.
     *
     * @param ch the channel
     * @param type the expected type
     * @return the event
     * @throws Exception on failure
     */
    public static CmEvent expectEvent(CmEventChannel ch, CmEventType type) throws Exception {
        CmEvent e = ch.poll(WAIT_NS);
        assertNotNull(e, "no CM event within 5 s, expected " + type);
        assertEquals(type, e.type(), "unexpected CM event " + e);
        return e;
    }

    /**
     * Posts a one-entry send request.
     *
     * @param qp the queue pair
     * @param wrId identifier
     * @param op opcode
     * @param flags send flags
     * @param mr local region
     * @param offset offset in the region
     * @param length bytes
     * @return the post's status code
     */
    public int send(QueuePair qp, long wrId, Opcode op, int flags, MemoryRegion mr, int offset, int length) {
        swr.clear().wrId(wrId).opcode(op).flags(flags);
        if (length > 0) {
            swr.sge(0, mr.address() + offset, length, mr.lkey());
        }
        return qp.postSend(swr);
    }

    /**
     * Posts a one-entry RDMA request.
     *
     * @param qp the queue pair
     * @param wrId identifier
     * @param op RDMA opcode
     * @param flags send flags
     * @param mr local region
     * @param offset offset in the local region
     * @param length bytes
     * @param remoteAddress remote address
     * @param rkey remote key
     * @return the post's status code
     */
    public int rdma(QueuePair qp, long wrId, Opcode op, int flags, MemoryRegion mr, int offset, int length,
                    long remoteAddress, int rkey) {
        swr.clear().wrId(wrId).opcode(op).flags(flags).remote(remoteAddress, rkey);
        if (length > 0) {
            swr.sge(0, mr.address() + offset, length, mr.lkey());
        }
        return qp.postSend(swr);
    }

    /**
     * Posts a one-entry receive.
     *
     * @param qp the queue pair
     * @param wrId identifier
     * @param mr region
     * @param offset offset
     * @param length bytes
     * @return the post's status code
     */
    public int recv(QueuePair qp, long wrId, MemoryRegion mr, int offset, int length) {
        rwr.numSge(0);
        rwr.wrId(wrId).sge(0, mr.address() + offset, length, mr.lkey());
        return qp.postRecv(rwr);
    }

    /**
     * Polls until one completion arrives (at most 5 s) and returns a copy of it.
     *
     * @param cq the queue
     * @return the completion
     */
    public WorkCompletion poll(CompletionQueue cq) {
        long deadline = System.nanoTime() + WAIT_NS;
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wc, 1);
            assertTrue(n >= 0, "poll failed: " + Errno.name(n));
            if (n == 1) {
                WorkCompletion copy = new WorkCompletion();
                WorkCompletion w = wc[0];
                copy.set(w.wrId(), w.status(), w.opcode(), w.byteLen(), w.immData(), w.flags(), w.qpNumber());
                return copy;
            }
            Thread.onSpinWait();
        }
        fail("no completion within 5 s");
        return null;
    }

    /**
     * Checks that no completion arrives within {@code ms}.
     *
     * @param cq the queue
     * @param ms how long to watch
     * @throws InterruptedException if interrupted
     */
    public void expectNothing(CompletionQueue cq, long ms) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wc, 1);
            if (n != 0) {
                fail("unexpected completion: " + (n > 0 ? wc[0] : Errno.name(n)));
            }
            Thread.sleep(1);
        }
    }

    /**
     * Closes everything this fixture created, in dependency order; every object is attempted, and the
     * first failure is reported after all were tried.
     */
    @Override
    public void close() {
        AssertionError first = null;
        for (AutoCloseable c : new AutoCloseable[] {idA, idB, listener, qpA, qpB, mrA, mrB, dmA, dmB, cqA, cqB,
            chA, chB, evA, evB, pdA, pdB}) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = new AssertionError("close failed: " + c, e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
