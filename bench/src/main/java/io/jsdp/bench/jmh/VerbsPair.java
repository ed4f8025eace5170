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
import java.util.concurrent.TimeUnit;

/**
 * One end of a connected queue-pair pair for benchmarks: its own send and receive completion queues
 * (no channel: benchmarks spin), one registered region, reusable work requests. Sends are unsignaled
 * except every {@link #SIGNAL_EVERY}th, as real protocols do; the send queue is drained when one is.
 */
final class VerbsPair implements AutoCloseable {
    static final int SIGNAL_EVERY = 16;
    private static final int QUEUE_DEPTH = 64;
    /** The receive buffer sits a page after the send buffer: the peer writes one, this side reads the other. */
    private static final int RECV_OFFSET = 4096;

    final ProtectionDomain pd;
    final CompletionQueue sendCq;
    final CompletionQueue recvCq;
    final DeviceMemory memory;
    final MemoryRegion mr;
    final CmEventChannel events;
    CmId id;
    QueuePair qp;
    private final SendWorkRequest send = new SendWorkRequest(1);
    private final ReceiveWorkRequest recv = new ReceiveWorkRequest(1);
    private final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
        new WorkCompletion()};
    private long sent;

    private VerbsPair(RdmaDevice device, int bytes) throws VerbsException {
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

    /** Connects two ends through the connection manager; {@code [0]} is the active side. */
    static VerbsPair[] connect(RdmaDevice a, RdmaDevice b, int bytes) throws IOException, InterruptedException {
        VerbsPair client = new VerbsPair(a, bytes);
        VerbsPair server = new VerbsPair(b, bytes);
        CmId listener = b.createId(server.events);
        try {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            listener.listen(1);
            client.id = a.createId(client.events);
            client.id.resolveAddress(listener.localAddress(), 1000);
            expect(client.events, CmEventType.ADDR_RESOLVED);
            client.id.resolveRoute(1000);
            expect(client.events, CmEventType.ROUTE_RESOLVED);
            client.qp = client.id.createQueuePair(client.pd, client.attributes());
            client.id.connect(new ConnectionParameters().rnrRetryCount(ConnectionParameters.RNR_RETRY_INFINITE));
            server.id = expect(server.events, CmEventType.CONNECT_REQUEST).id();
            server.qp = server.id.createQueuePair(server.pd, server.attributes());
            // Receives first, so no message meets an empty receive queue.
            for (int i = 0; i < QUEUE_DEPTH; i++) {
                client.postRecv(bytes);
                server.postRecv(bytes);
            }
            server.id.accept(new ConnectionParameters().rnrRetryCount(ConnectionParameters.RNR_RETRY_INFINITE));
            expect(client.events, CmEventType.ESTABLISHED);
            expect(server.events, CmEventType.ESTABLISHED);
        } finally {
            listener.close();
        }
        return new VerbsPair[] {client, server};
    }

    private static CmEvent expect(CmEventChannel ch, CmEventType type) throws VerbsException, InterruptedException {
        CmEvent e = ch.poll(TimeUnit.SECONDS.toNanos(5));
        if (e == null || e.type() != type) {
            throw new IllegalStateException("expected " + type + ", got " + e);
        }
        return e;
    }

    void postRecv(int bytes) {
        recv.wrId(1).sge(0, mr.address() + RECV_OFFSET, bytes, mr.lkey());
        check(qp.postRecv(recv), "postRecv");
    }

    /** Sends {@code bytes} from the start of the region; signaled every {@link #SIGNAL_EVERY}th time. */
    void send(int bytes) {
        boolean signal = ++sent % SIGNAL_EVERY == 0;
        send.wrId(sent).flags(signal ? SendFlags.SIGNALED : 0).sge(0, mr.address(), bytes, mr.lkey());
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
        mr.close();
        memory.close();
        sendCq.close();
        recvCq.close();
        events.close();
        pd.close();
    }
}
