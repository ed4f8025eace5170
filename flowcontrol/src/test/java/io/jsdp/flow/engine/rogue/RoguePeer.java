package io.jsdp.flow.engine.rogue;

import io.jsdp.flow.wire.Bsdh;
import io.jsdp.flow.wire.Hello;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.flow.wire.RingMessages;
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
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A test peer that speaks SDP by hand over raw verbs: one reliable-connected queue pair on a SoftRdma
 * device, receives posted, and every message built byte by byte, so it can send anything — any BSDH
 * field, any payload, any length, or no BSDH at all — to an engine connection.
 *
 * <p>As the active side ({@link #connect}) it connects to an {@link io.jsdp.flow.engine.SdpListener};
 * as the passive side ({@link RogueListener#accept}) an engine connection connects to it. Either way the
 * caller drives the Hello/HelloAck exchange with {@link #hello()} / {@link #helloAck()} (or breaks it).
 *
 * <p>It also keeps the state a correct peer keeps ({@code sdp-wire.md} C.6, C.7): the next
 * {@code mseq}, the last engine {@code mseq} received, the {@code bufs}/{@code mseq_ack} of every
 * engine message (to know its own credits), so {@link #data}, {@link #creditUpdate()} and
 * {@link #disconn()} build valid messages and {@link #sent} advances the state for a message the
 * engine took. Single-threaded: one test thread drives it; {@link #pump()} takes completions and
 * connection-manager events.
 */
public final class RoguePeer implements AutoCloseable {
    /** Longest any single step waits. */
    public static final long STEP_NS = TimeUnit.SECONDS.toNanos(5);
    private static final long KIND_RECV = 1L << 40;
    private static final long KIND_SEND = 2L << 40;
    private static final long INDEX_MASK = (1L << 40) - 1;

    /** One message the engine sent us. */
    public record Message(int mid, int flags, int bufs, long len, int mseq, int mseqAck, byte[] bytes) {
        /**
         * The payload after the BSDH.
         *
         * @return the bytes past the first 16
         */
        public byte[] payload() {
            return java.util.Arrays.copyOfRange(bytes, Math.min(Bsdh.LENGTH, bytes.length), bytes.length);
        }

        @Override
        public String toString() {
            return MessageId.name(mid) + "(mseq " + mseq + " ack " + mseqAck + " bufs " + bufs + " len " + len + ")";
        }
    }

    /** Sizes of the rogue's queue pair and buffers. */
    public static final class Options {
        int receiveBuffers = 32;
        int receiveBytes = 32 * 1024;
        int sendBytes = 64 * 1024;
        int ringBytes;

        /**
         * A receive ring for packetized flow control, registered for remote write (0: none).
         *
         * @param bytes its size
         * @return this
         */
        public Options ringBytes(int bytes) {
            ringBytes = bytes;
            return this;
        }

        /**
         * Receive buffers to post (what {@code bufs} advertises).
         *
         * @param n count
         * @return this
         */
        public Options receiveBuffers(int n) {
            receiveBuffers = n;
            return this;
        }

        /**
         * Size of each receive buffer ({@code localrcvsz} / {@code actrcvsz}).
         *
         * @param bytes size
         * @return this
         */
        public Options receiveBytes(int bytes) {
            receiveBytes = bytes;
            return this;
        }

        /**
         * The longest message the rogue can send.
         *
         * @param bytes size
         * @return this
         */
        public Options sendBytes(int bytes) {
            sendBytes = bytes;
            return this;
        }
    }

    private final CmId id;
    private final CmEventChannel channel;
    private final RogueListener listener;
    private final Options options;
    private final CompletionQueue cq;
    private final DeviceMemory memory;
    private final MemoryRegion mr;
    private final QueuePair qp;
    private final ByteBuffer mem;
    private final DeviceMemory ringMemory;
    private final MemoryRegion ringMr;
    private final int sendBase;
    private final WorkCompletion[] wcs = new WorkCompletion[16];
    private final SendWorkRequest swr = new SendWorkRequest(1);
    private final ReceiveWorkRequest rwr = new ReceiveWorkRequest(1);
    private final ArrayDeque<Message> inbox = new ArrayDeque<>();
    /** bufs and mseq_ack of every engine message, by mseq: what our credits are computed from. */
    private final Map<Integer, int[]> engineMessages = new HashMap<>();

    private int posted;
    private long sendsPosted;
    private long sendsCompleted;
    private WcStatus lastSendStatus = WcStatus.SUCCESS;
    private boolean qpFailed;
    private boolean disconnected;
    private boolean abortReceived;
    private String firstError;
    private boolean closed;
    /** Protocol state of a correct peer. */
    private int nextMseq;
    private int lastRecvMseq = -1;

    private RoguePeer(CmId id, CmEventChannel channel, RogueListener listener, ProtectionDomain pd, Options o)
        throws VerbsException {
        this.id = id;
        this.channel = channel;
        this.listener = listener;
        this.options = o;
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        RdmaDevice device = pd.device();
        this.sendBase = o.receiveBuffers * o.receiveBytes;
        this.cq = device.createCompletionQueue(null, o.receiveBuffers + 8);
        this.memory = device.allocateMemory(sendBase + o.sendBytes);
        this.mr = pd.register(memory.buffer(), Access.LOCAL_WRITE);
        this.mem = memory.buffer();
        this.ringMemory = o.ringBytes > 0 ? device.allocateMemory(o.ringBytes) : null;
        this.ringMr = ringMemory == null ? null : pd.register(ringMemory.buffer(), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        this.qp = id.createQueuePair(pd, new QueuePairAttributes().sendCq(cq).recvCq(cq).maxSendWr(4)
            .maxRecvWr(o.receiveBuffers).maxSendSge(1).maxRecvSge(1).maxInlineData(0)
            .ackTimeoutNs(TimeUnit.MILLISECONDS.toNanos(10)));
        for (int i = 0; i < o.receiveBuffers; i++) {
            postReceive(i);
        }
    }

    /**
     * Connects a raw queue pair to an SDP listener (the rogue is the active side); receives are
     * posted, nothing is sent yet.
     *
     * @param pd a protection domain of the rogue's device
     * @param listener the engine's listener address
     * @param o sizes
     * @return the connected rogue
     * @throws Exception when the connection manager fails
     */
    public static RoguePeer connect(ProtectionDomain pd, InetSocketAddress listener, Options o) throws Exception {
        RdmaDevice device = pd.device();
        CmEventChannel ch = device.createEventChannel();
        CmId id = device.createId(ch);
        RoguePeer p = null;
        try {
            id.resolveAddress(listener, 2_000);
            expect(ch, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(2_000);
            expect(ch, CmEventType.ROUTE_RESOLVED);
            p = new RoguePeer(id, ch, null, pd, o);
            id.connect(new ConnectionParameters().retryCount(2).rnrRetryCount(0).connectTimeoutMs(2_000));
            expect(ch, CmEventType.ESTABLISHED);
            return p;
        } catch (Exception | AssertionError e) {
            if (p != null) {
                p.close();
            } else {
                id.close();
                ch.close();
            }
            throw e;
        }
    }

    /** Passive side: the listener got a CONNECT_REQUEST for {@code id}. */
    static RoguePeer accept(RogueListener listener, CmId id, ProtectionDomain pd, Options o) throws VerbsException {
        RoguePeer p = new RoguePeer(id, null, listener, pd, o);
        try {
            id.accept(new ConnectionParameters().retryCount(2).rnrRetryCount(0));
        } catch (VerbsException e) {
            p.close();
            throw e;
        }
        return p;
    }

    private static void expect(CmEventChannel ch, CmEventType type) throws Exception {
        CmEvent e = ch.poll(STEP_NS);
        if (e == null || e.type() != type) {
            throw new AssertionError("expected " + type + ", got " + e);
        }
    }

    private void postReceive(int buf) {
        rwr.wrId(KIND_RECV | buf).numSge(0).sge(0, mr.address() + (long) buf * options.receiveBytes, options.receiveBytes,
            mr.lkey());
        if (qp.postRecv(rwr) == Errno.OK) {
            posted++;
        }
    }

    // ------------------------------------------------------------------ raw traffic

    /**
     * Sends {@code bytes} (position to limit) as one SEND, exactly as they are, and waits for its
     * completion.
     *
     * @param bytes the message; any length from 0 to the send area
     * @return the completion status ({@code SUCCESS} when the engine's queue pair took it)
     */
    public WcStatus sendRaw(ByteBuffer bytes) {
        int n = bytes.remaining();
        if (n > options.sendBytes) {
            throw new IllegalArgumentException(n + " bytes > send area " + options.sendBytes);
        }
        if (qpFailed) {
            return lastSendStatus == WcStatus.SUCCESS ? WcStatus.WR_FLUSH_ERR : lastSendStatus;
        }
        mem.put(sendBase, bytes, bytes.position(), n);
        swr.clear().wrId(KIND_SEND | sendsPosted).opcode(Opcode.SEND).flags(SendFlags.SIGNALED);
        if (n > 0) {
            swr.sge(0, mr.address() + sendBase, n, mr.lkey());
        }
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            qpFailed = true;
            noteError("postSend errno " + rc);
            return WcStatus.LOC_QP_OP_ERR;
        }
        sendsPosted++;
        long deadline = System.nanoTime() + STEP_NS;
        for (int idle = 0; sendsCompleted < sendsPosted;) {
            if (pump() == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the rogue's send did not complete within 5 s");
                }
                backOff(idle++);
            }
        }
        return lastSendStatus;
    }

    /** Spins a little, then parks briefly: several rogues share two cores with the engine's threads. */
    private static void backOff(int idle) {
        if (idle < 200) {
            Thread.onSpinWait();
        } else {
            LockSupport.parkNanos(idle < 2_000 ? 10_000 : 100_000);
        }
    }

    /**
     * Takes completions and connection-manager events without waiting.
     *
     * @return how many were taken
     */
    public int pump() {
        if (closed) {
            return 0;
        }
        int total = 0;
        int n;
        while ((n = cq.poll(wcs, wcs.length)) > 0) {
            for (int i = 0; i < n; i++) {
                onCompletion(wcs[i]);
            }
            total += n;
        }
        if (n < 0) {
            qpFailed = true;
            noteError("poll errno " + n);
        }
        CmEvent e;
        while ((e = nextCmEvent()) != null) {
            total++;
            if (e.type() == CmEventType.DISCONNECTED) {
                disconnected = true;
            }
        }
        return total;
    }

    private CmEvent nextCmEvent() {
        if (listener != null) {
            return listener.nextEvent(id);
        }
        try {
            return channel.poll(0);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return null;
        } catch (VerbsException ve) {
            return null;
        }
    }

    private void onCompletion(WorkCompletion wc) {
        long kind = wc.wrId() & ~INDEX_MASK;
        int index = (int) (wc.wrId() & INDEX_MASK);
        if (kind == KIND_SEND) {
            sendsCompleted++;
            lastSendStatus = wc.status();
            if (!wc.isSuccess()) {
                qpFailed = true;
                noteError("send " + wc.status());
            }
            return;
        }
        posted--;
        if (!wc.isSuccess() || wc.opcode() != WcOpcode.RECV) {
            qpFailed = true;
            noteError("receive " + wc.status());
            return;
        }
        int len = wc.byteLen();
        byte[] bytes = new byte[len];
        mem.get(index * options.receiveBytes, bytes, 0, len);
        postReceive(index);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
        if (len < Bsdh.LENGTH) {
            inbox.add(new Message(-1, 0, 0, len, 0, 0, bytes));
            return;
        }
        Bsdh h = new Bsdh().wrap(b, 0);
        Message m = new Message(h.mid(), h.flags(), h.bufs(), h.len(), h.mseq(), h.mseqAck(), bytes);
        if (m.mid == MessageId.ABORT_CONN) {
            abortReceived = true;
        }
        engineMessages.put(m.mseq, new int[] {m.bufs, m.mid == MessageId.HELLO ? -1 : m.mseqAck});
        lastRecvMseq = m.mseq;
        inbox.add(m);
    }

    private void noteError(String what) {
        if (firstError == null) {
            firstError = what;
        }
    }

    /**
     * The next message the engine sent, waiting up to {@code timeoutNs}.
     *
     * @param timeoutNs the longest wait
     * @return the message, or null when none came (or the queue pair failed)
     */
    public Message receive(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        for (int idle = 0;; idle++) {
            pump();
            Message m = inbox.poll();
            if (m != null) {
                return m;
            }
            if (qpFailed || System.nanoTime() - deadline > 0) {
                return null;
            }
            backOff(idle);
        }
    }

    /**
     * The next message that is not a pure credit update, waiting up to {@code timeoutNs}.
     *
     * @param timeoutNs the longest wait
     * @return the message, or null
     */
    public Message receiveSkippingCreditUpdates(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        for (;;) {
            Message m = receive(Math.max(0, deadline - System.nanoTime()));
            if (m == null || m.mid != MessageId.DATA || m.len != Bsdh.LENGTH) {
                return m;
            }
        }
    }

    /**
     * Waits until the engine's abort shows: an AbortConn message, a DISCONNECTED event or the queue pair
     * failing.
     *
     * @param timeoutNs the longest wait
     * @return true when it showed in time
     */
    public boolean awaitAbort(long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        for (;;) {
            pump();
            inbox.clear();
            if (sawAbort()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(100_000);
        }
    }

    /**
     * Whether the engine's abort has shown (without waiting).
     *
     * @return true after an AbortConn, a DISCONNECTED or a queue-pair failure
     */
    public boolean sawAbort() {
        return abortReceived || disconnected || qpFailed;
    }

    /**
     * What the rogue saw of the end, for messages.
     *
     * @return e.g. "abortConn=true disconnected=false qpFailed=false"
     */
    public String describeEnd() {
        return "abortConn=" + abortReceived + " disconnected=" + disconnected + " qpFailed=" + qpFailed
            + (firstError == null ? "" : " (" + firstError + ")");
    }

    // ------------------------------------------------------------------ building messages

    /**
     * A message with a valid BSDH for the next {@code mseq} (not yet sent: {@link #sent} advances).
     *
     * @param mid the message id
     * @param payload the payload after the BSDH
     * @return a big-endian heap buffer holding the message
     */
    public ByteBuffer frame(int mid, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(Bsdh.LENGTH + payload.length).order(ByteOrder.BIG_ENDIAN);
        new Bsdh().wrap(b, 0).put(mid, 0, posted, b.capacity(), nextMseq, lastRecvMseq);
        b.put(Bsdh.LENGTH, payload);
        return b;
    }

    /**
     * A valid Data message.
     *
     * @param payload its bytes
     * @return the message
     */
    public ByteBuffer data(byte[] payload) {
        return frame(MessageId.DATA, payload);
    }

    /**
     * A valid credit update (Data without payload).
     *
     * @return the message
     */
    public ByteBuffer creditUpdate() {
        return frame(MessageId.DATA, new byte[0]);
    }

    /**
     * A valid DisConn.
     *
     * @return the message
     */
    public ByteBuffer disconn() {
        return frame(MessageId.DISCONN, new byte[0]);
    }

    /**
     * A valid Hello (mseq 0, our posted receives in {@code bufs}, our buffer size).
     *
     * @return the 92-byte message
     */
    public ByteBuffer hello() {
        ByteBuffer b = ByteBuffer.allocate(Hello.LENGTH).order(ByteOrder.BIG_ENDIAN);
        new Bsdh().wrap(b, 0).put(MessageId.HELLO, 0, posted, Hello.LENGTH, 0, 0);
        new Hello().wrap(b, 0).put(1, options.receiveBytes, id.localAddress(), id.remoteAddress(), 0);
        return b;
    }

    /**
     * A Hello asking for the scheme of {@code capabilities}, advertising our ring (if any) with
     * {@code rkey} and {@code ringBytes} as given.
     *
     * @param capabilities the capability word
     * @param rkey the rkey to advertise (the real one: {@link #ringRkey()})
     * @param ringBytes the size to advertise
     * @return the message
     */
    public ByteBuffer hello(int capabilities, int rkey, int ringBytes) {
        ByteBuffer b = hello();
        new Hello().wrap(b, 0).put(1, options.receiveBytes, id.localAddress(), id.remoteAddress(), capabilities)
            .putRing(ringMr == null ? 0 : ringMr.address(), rkey, ringBytes);
        return b;
    }

    /**
     * A HelloAck answering with {@code capabilities}, advertising our ring as given.
     *
     * @param capabilities the capability word
     * @param rkey the rkey to advertise
     * @param ringBytes the size to advertise
     * @return the message
     */
    public ByteBuffer helloAck(int capabilities, int rkey, int ringBytes) {
        ByteBuffer b = helloAck();
        new HelloAck().wrap(b, 0).put(1, options.receiveBytes, 4, capabilities)
            .putRing(ringMr == null ? 0 : ringMr.address(), rkey, ringBytes);
        return b;
    }

    /**
     * Our ring's real rkey.
     *
     * @return the rkey (0 without a ring)
     */
    public int ringRkey() {
        return ringMr == null ? 0 : ringMr.rkey();
    }

    /**
     * A RingData for the next {@code mseq}.
     *
     * @param offset ring offset
     * @param length bytes
     * @param consumed the consumed count for the reverse direction
     * @return the 28-byte message
     */
    public ByteBuffer ringData(int offset, int length, int consumed) {
        ByteBuffer b = frame(MessageId.RING_DATA, new byte[RingMessages.RING_DATA_LENGTH - Bsdh.LENGTH]);
        b.putInt(RingMessages.RING_DATA_OFFSET_OFFSET, offset).putInt(RingMessages.RING_DATA_LENGTH_OFFSET, length)
            .putInt(RingMessages.RING_DATA_CONSUMED_OFFSET, consumed);
        return b;
    }

    /**
     * A RingData for the next {@code mseq} that carries its run inline after the 28 bytes.
     *
     * @param offset ring offset
     * @param length the run's length as the message states it
     * @param consumed the consumed count for the reverse direction
     * @param inline the bytes carried
     * @return the message
     */
    public ByteBuffer ringData(int offset, int length, int consumed, byte[] inline) {
        byte[] body = new byte[RingMessages.RING_DATA_LENGTH - Bsdh.LENGTH + inline.length];
        System.arraycopy(inline, 0, body, RingMessages.RING_DATA_LENGTH - Bsdh.LENGTH, inline.length);
        ByteBuffer b = frame(MessageId.RING_DATA, body);
        b.putInt(RingMessages.RING_DATA_OFFSET_OFFSET, offset).putInt(RingMessages.RING_DATA_LENGTH_OFFSET, length)
            .putInt(RingMessages.RING_DATA_CONSUMED_OFFSET, consumed);
        return b;
    }

    /**
     * A RingAck for the next {@code mseq}.
     *
     * @param consumed the consumed count
     * @return the 20-byte message
     */
    public ByteBuffer ringAck(int consumed) {
        ByteBuffer b = frame(MessageId.RING_ACK, new byte[RingMessages.RING_ACK_LENGTH - Bsdh.LENGTH]);
        b.putInt(RingMessages.RING_ACK_CONSUMED_OFFSET, consumed);
        return b;
    }

    /**
     * RDMA-writes {@code bytes} to the engine's memory and waits for the completion.
     *
     * @param remoteAddress where
     * @param rkey with which key
     * @param bytes what (at most the send area)
     * @return the completion status
     */
    public WcStatus rdmaWrite(long remoteAddress, int rkey, byte[] bytes) {
        if (qpFailed) {
            return lastSendStatus == WcStatus.SUCCESS ? WcStatus.WR_FLUSH_ERR : lastSendStatus;
        }
        mem.put(sendBase, bytes);
        swr.clear().wrId(KIND_SEND | sendsPosted).opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
            .sge(0, mr.address() + sendBase, bytes.length, mr.lkey()).remote(remoteAddress, rkey);
        int rc = qp.postSend(swr);
        if (rc != Errno.OK) {
            qpFailed = true;
            noteError("postSend errno " + rc);
            return WcStatus.LOC_QP_OP_ERR;
        }
        sendsPosted++;
        long deadline = System.nanoTime() + STEP_NS;
        for (int idle = 0; sendsCompleted < sendsPosted;) {
            if (pump() == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("the rogue's write did not complete within 5 s");
                }
                backOff(idle++);
            }
        }
        return lastSendStatus;
    }

    /**
     * A valid HelloAck (mseq 0, mseq_ack 0, our posted receives, our buffer size).
     *
     * @return the 196-byte message
     */
    public ByteBuffer helloAck() {
        ByteBuffer b = ByteBuffer.allocate(HelloAck.LENGTH).order(ByteOrder.BIG_ENDIAN);
        new Bsdh().wrap(b, 0).put(MessageId.HELLO_ACK, 0, posted, HelloAck.LENGTH, 0, 0);
        new HelloAck().wrap(b, 0).put(1, options.receiveBytes, 4, 0);
        return b;
    }

    /**
     * Sends a message and, when the engine took it, advances the sequence number as a correct peer
     * does: for messages built by {@link #frame} and sent unchanged.
     *
     * @param message the message
     * @return the send's completion status
     */
    public WcStatus sendValid(ByteBuffer message) {
        WcStatus s = sendRaw(message.duplicate());
        if (s == WcStatus.SUCCESS) {
            sent(message);
        }
        return s;
    }

    /**
     * Records that the engine took {@code message}: the next {@code mseq} follows its {@code mseq}.
     *
     * @param message a message with a BSDH
     */
    public void sent(ByteBuffer message) {
        nextMseq = message.order(ByteOrder.BIG_ENDIAN).getInt(Bsdh.MSEQ_OFFSET) + 1;
    }

    /**
     * Our credits toward the engine, as a correct peer computes them: for our next message, the
     * {@code bufs} of the newest engine message less our messages it had not seen.
     *
     * @return credits (the engine's receive buffers we may still use)
     */
    public int credits() {
        return creditsAcking(lastRecvMseq);
    }

    /**
     * Our credits for the next message if it acknowledged engine message {@code k}
     * ({@code CreditFlowControl}'s check: {@code bufs[k] - (m - 1 - ack[k])}).
     *
     * @param k the acknowledged engine mseq
     * @return the credits, or {@link Integer#MIN_VALUE} when we never received message {@code k}
     */
    public int creditsAcking(int k) {
        int[] e = engineMessages.get(k);
        return e == null ? Integer.MIN_VALUE : e[0] - (nextMseq - 1 - e[1]);
    }

    /**
     * The next {@code mseq} a correct peer would send.
     *
     * @return the mseq
     */
    public int nextMseq() {
        return nextMseq;
    }

    /**
     * The last engine {@code mseq} received.
     *
     * @return the mseq, -1 before any
     */
    public int lastReceivedMseq() {
        return lastRecvMseq;
    }

    /**
     * Receives currently posted (what {@code bufs} advertises).
     *
     * @return the count
     */
    public int posted() {
        return posted;
    }

    /**
     * The rogue's address.
     *
     * @return the local address of its id
     */
    public InetSocketAddress localAddress() {
        return id.localAddress();
    }

    /** Disconnects and frees everything. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            id.disconnect();
        } catch (VerbsException e) {
            // not connected any more
        }
        if (listener != null) {
            listener.forget(id);
        }
        id.close();
        mr.close();
        memory.close();
        if (ringMr != null) {
            ringMr.close();
            ringMemory.close();
        }
        try {
            cq.close();
        } catch (VerbsException e) {
            throw new IllegalStateException("rogue completion queue", e);
        }
        if (channel != null) {
            try {
                channel.close();
            } catch (VerbsException e) {
                throw new IllegalStateException("rogue event channel", e);
            }
        }
    }
}
