package io.jsdp.bench.jmh;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * One end of a connected queue-pair pair for benchmarks: its own send and receive completion queues
 * (no channel: benchmarks spin), one registered region, reusable work requests. Sends are unsignaled
 * except every {@link #SIGNAL_EVERY}th, as real protocols do; the send queue is drained when one is.
 *
 * <p>Both ends in one thread: {@link #connect(RdmaDevice, RdmaDevice, int)}. Ends in two threads or
 * processes: {@link #listen} and {@link #accept} on the passive side,
 * {@link #connect(RdmaDevice, InetSocketAddress, int)} on the active side.
 *
 * <p>Region layout: the send buffer at offset 0, the receive buffer (every posted receive points at
 * it) at {@link #RECV_OFFSET}.
 */
final class VerbsPair implements AutoCloseable {
    static final int SIGNAL_EVERY = 16;
    /** Send and receive queue depth. */
    static final int QUEUE_DEPTH = 64;
    /** How long connection steps may take. */
    static final long CONNECT_WAIT_NS = TimeUnit.SECONDS.toNanos(10);
    /** The receive buffer sits a page after the send buffer: the peer writes one, this side reads the other. */
    private static final int RECV_OFFSET = 4096;

    final ProtectionDomain pd;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final DeviceMemory memory;
    final MemoryRegion mr;
    final CmEventChannel events;
    private final RdmaDevice device;
    /** The passive side's listener ({@link #listen}), else null. */
    private CmId listener;
    CmId id;
    QueuePair qp;
    /** The private data of the peer's accept, on the active side. */
    private byte[] peerPrivateData = new byte[0];
    private final SendWorkRequest send = new SendWorkRequest(1);
    private final ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
    private final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
        new WorkCompletion()};
    private long sent;

    private VerbsPair(RdmaDevice device, int bytes) throws VerbsException {
        this.device = device;
        pd = device.allocateProtectionDomain();
        sendCq = device.createCompletionQueue(null, QUEUE_DEPTH * 2);
        recvCq = device.createCompletionQueue(null, QUEUE_DEPTH * 2);
        memory = device.allocateMemory(RECV_OFFSET + Math.max(bytes, 64));
        mr = pd.register(memory.buffer(), Access.LOCAL_WRITE);
        events = device.createEventChannel();
    }

    private QueuePairAttributes attributes() {
        return new QueuePairAttributes().sendCq(sendCq).recvCq(recvCq).maxSendWr(QUEUE_DEPTH).maxRecvWr(QUEUE_DEPTH)
            .maxSendSge(1).maxRecvSge(1);
    }

    /** Connects two ends in one thread through the connection manager; {@code [0]} is the active side. */
    static VerbsPair[] connect(RdmaDevice a, RdmaDevice b, int bytes) throws IOException, InterruptedException {
        VerbsPair server = listen(b, 0, bytes);
        VerbsPair client = new VerbsPair(a, bytes);
        // The connect is asynchronous: its request waits on the server's channel until accept takes it.
        client.startConnect(server.listenAddress(), bytes);
        server.accept(CONNECT_WAIT_NS, () -> true, bytes, new byte[0]);
        client.finishConnect(CONNECT_WAIT_NS);
        return new VerbsPair[] {client, server};
    }

    /**
     * The passive end before its connection: a pair whose event channel a listener on {@code port}
     * reports to. {@link #accept} then takes one connection.
     *
     * @param device the device
     * @param port the connection-manager port, 0 for an ephemeral one
     * @param bytes the largest message
     * @return the pair, listening at {@link #listenAddress}
     * @throws IOException when the port cannot be bound
     */
    static VerbsPair listen(RdmaDevice device, int port, int bytes) throws IOException {
        VerbsPair p = new VerbsPair(device, bytes);
        try {
            p.listener = device.createId(p.events);
            p.listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            p.listener.listen(1);
            return p;
        } catch (IOException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /**
     * The active end: connects to a listener and waits until the connection is established.
     *
     * @param device the device
     * @param destination the listener's address
     * @param bytes the largest message
     * @return the connected pair; {@link #peerPrivateData()} holds the accept's private data
     * @throws IOException when the connection is not established
     * @throws InterruptedException when interrupted while waiting
     */
    static VerbsPair connect(RdmaDevice device, InetSocketAddress destination, int bytes)
        throws IOException, InterruptedException {
        VerbsPair p = new VerbsPair(device, bytes);
        try {
            p.startConnect(destination, bytes);
            p.finishConnect(CONNECT_WAIT_NS);
            return p;
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    private void startConnect(InetSocketAddress destination, int bytes) throws IOException, InterruptedException {
        id = device.createId(events);
        id.resolveAddress(destination, 1000);
        expect(events, CmEventType.ADDR_RESOLVED);
        id.resolveRoute(1000);
        expect(events, CmEventType.ROUTE_RESOLVED);
        qp = id.createQueuePair(pd, attributes());
        // Receives first, so no message meets an empty receive queue.
        for (int i = 0; i < QUEUE_DEPTH; i++) {
            postRecv(bytes);
        }
        id.connect(new ConnectionParameters().rnrRetryCount(ConnectionParameters.RNR_RETRY_INFINITE));
    }

    private void finishConnect(long waitNs) throws VerbsException, InterruptedException {
        peerPrivateData = expect(events, CmEventType.ESTABLISHED, waitNs).privateData();
    }

    /**
     * The passive end: waits for a connect request on {@link #listen}'s listener (or on this pair's
     * channel), accepts it with {@code privateData} and waits until the connection is established.
     *
     * @param waitNs how long to wait for the request
     * @param running polled while waiting; false gives up
     * @param bytes the largest message
     * @param privateData what the accept carries to the active side
     * @return false when {@code running} turned false first
     * @throws IOException when accepting fails or the request does not come in time
     * @throws InterruptedException when interrupted while waiting
     */
    boolean accept(long waitNs, java.util.function.BooleanSupplier running, int bytes, byte[] privateData)
        throws IOException, InterruptedException {
        long deadline = System.nanoTime() + waitNs;
        CmEvent request = null;
        while (request == null) {
            if (!running.getAsBoolean()) {
                return false;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new VerbsException(Errno.ETIMEDOUT, "no connect request within " + waitNs / 1_000_000 + " ms");
            }
            request = events.poll(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
        }
        if (request.type() != CmEventType.CONNECT_REQUEST) {
            throw new IllegalStateException("expected CONNECT_REQUEST, got " + request);
        }
        id = request.id();
        qp = id.createQueuePair(pd, attributes());
        for (int i = 0; i < QUEUE_DEPTH; i++) {
            postRecv(bytes);
        }
        id.accept(new ConnectionParameters().rnrRetryCount(ConnectionParameters.RNR_RETRY_INFINITE)
            .privateData(privateData));
        expect(events, CmEventType.ESTABLISHED, CONNECT_WAIT_NS);
        return true;
    }

    private static CmEvent expect(CmEventChannel ch, CmEventType type) throws VerbsException, InterruptedException {
        return expect(ch, type, CONNECT_WAIT_NS);
    }

    private static CmEvent expect(CmEventChannel ch, CmEventType type, long waitNs)
        throws VerbsException, InterruptedException {
        CmEvent e = ch.poll(waitNs);
        if (e == null || e.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + e);
        }
        return e;
    }

    /**
     * The listener's address, on the passive side after {@link #listen}.
     *
     * @return the bound address
     */
    InetSocketAddress listenAddress() {
        return listener.localAddress();
    }

    /**
     * The private data the peer's accept carried, on the active side.
     *
     * @return a copy
     */
    byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /**
     * The send buffer: what {@link #send} sends starts at its index 0.
     *
     * @return a view of the region from offset 0
     */
    ByteBuffer sendBuffer() {
        return memory.buffer().duplicate().limit(RECV_OFFSET).slice();
    }

    /**
     * The receive buffer, which every posted receive fills.
     *
     * @return a view of the region from {@link #RECV_OFFSET}
     */
    ByteBuffer recvBuffer() {
        return memory.buffer().duplicate().position(RECV_OFFSET).slice();
    }

    void postRecv(int bytes) {
        recv.wrId(1).sge(0, mr.address() + RECV_OFFSET, bytes, mr.lkey());
        check(qp.postRecv(recv), "postRecv");
    }

    /** Sends {@code bytes} from the start of the region; signaled every {@link #SIGNAL_EVERY}th time. */
    void send(int bytes) {
        send(0, bytes);
    }

    /**
     * Sends back the {@code bytes} the last receive brought, straight from the receive buffer (an echo
     * without a copy of its own). Safe because the peer sends nothing more before this reply arrives.
     */
    void echo(int bytes) {
        send(RECV_OFFSET, bytes);
    }

    private void send(int offset, int bytes) {
        boolean signal = ++sent % SIGNAL_EVERY == 0;
        send.wrId(sent).flags(signal ? SendFlags.SIGNALED : 0).sge(0, mr.address() + offset, bytes, mr.lkey());
        check(qp.postSend(send), "postSend");
        if (signal) {
            int n;
            while ((n = sendCq.poll(wc, wc.length)) == 0) {
                Thread.onSpinWait();
            }
            if (n < 0 || wc[0].status() != WcStatus.SUCCESS) {
                throw new IllegalStateException("send failed: " + (n < 0 ? Errno.name(n) : wc[0]));
            }
        }
    }

    /**
     * Spins until one receive completes. The caller reposts the receive with {@link #postRecv} when it
     * suits it: an echo replies first and replenishes after, off the round trip's critical path.
     *
     * @return false when {@code running} turned false first
     */
    boolean awaitRecv(java.util.function.BooleanSupplier running) {
        int n;
        int spins = 0;
        while ((n = recvCq.poll(wc, 1)) == 0) {
            Thread.onSpinWait();
            if ((++spins & 0xffff) == 0 && !running.getAsBoolean()) {
                return false;
            }
        }
        if (n < 0 || wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("receive failed: " + (n < 0 ? Errno.name(n) : wc[0]));
        }
        return true;
    }

    /** Polls the receive queue once; on a completion posts a fresh receive and returns true. */
    boolean tryRecv(int bytes) {
        int n = recvCq.poll(wc, 1);
        if (n == 0) {
            return false;
        }
        if (n < 0 || wc[0].status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("receive failed: " + (n < 0 ? Errno.name(n) : wc[0]));
        }
        postRecv(bytes);
        return true;
    }

    private static void check(int rc, String what) {
        if (rc != Errno.OK) {
            throw new IllegalStateException(what + " failed: " + Errno.name(rc));
        }
    }

    @Override
    public void close() throws VerbsException {
        if (id != null) {
            id.close();
        }
        if (listener != null) {
            listener.close();
        }
        mr.close();
        memory.close();
        sendCq.close();
        recvCq.close();
        events.close();
        pd.close();
    }
}
