package io.jsdp.flow.engine.rogue;

import static io.jsdp.flow.engine.rogue.RogueBench.OUTCOME_NS;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.credit.CreditFlowControl;
import io.jsdp.flow.engine.Blocking;
import io.jsdp.flow.engine.Failure;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.packetized.PacketizedFlowControl;
import io.jsdp.flow.wire.Bsdh;
import io.jsdp.flow.wire.Hello;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.verbs.WcStatus;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 5, acceptance 3, the fuzz half: 10,000 randomly mutated messages driven at engine connections.
 * Each connection starts from a valid sequence — Hello or HelloAck, then Data, credit updates and
 * maybe a DisConn, as a correct peer with the engine's credits would send them — and some messages are
 * mutated (bits, bytes, header fields set to edge values, lengths cut, grown or made consistent, or
 * random junk). The rogue alternates between the active and the passive side.
 *
 * <p>An oracle written from the specification ({@code sdp-wire.md} C.1–C.7) predicts each message's
 * fate from the bytes actually sent: accepted, or the violation that must abort the connection (or,
 * where the engine may have sent messages the rogue has not seen yet, either). Every connection must
 * end open-and-correct — it delivered exactly the payloads of the Data messages it accepted, mutated or
 * not, in order, and it still carries data both ways — or FAILED with the predicted FFDC record; no
 * step may wait past {@link RogueBench#OUTCOME_NS}. The seed is printed; {@code -Djsdp.fuzz.seed=N}
 * replays a run.
 */
@Tag("slow") // about 30 s on two cores: four drivers, each waiting on the fabric's latency
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProtocolFuzzTest {
    static final int MUTATED_MESSAGES = Integer.getInteger("jsdp.fuzz.messages", 10_000);
    static final int ENGINE_BUFFER_BYTES = 4096;
    static final SdpOptions ENGINE = new SdpOptions().bufferBytes(ENGINE_BUFFER_BYTES).receiveBuffers(8).sendBuffers(4);
    /** Payloads up to this size keep a message in one engine buffer. */
    static final int MAX_PAYLOAD = ENGINE_BUFFER_BYTES - Bsdh.LENGTH;
    /** The rogue's buffers: as large as the engine's, so nothing the engine sends overflows them. */
    static final RoguePeer.Options ROGUE = new RoguePeer.Options().receiveBuffers(16).receiveBytes(ENGINE_BUFFER_BYTES)
        .sendBytes(2 * ENGINE_BUFFER_BYTES + Bsdh.LENGTH);

    /** What a message must do to the engine connection. */
    enum Fate {
        /** Taken: the connection stays open. */
        ACCEPT,
        /** A protocol violation: FAILED with PROTOCOL_VIOLATION and a record protocol.NAME. */
        VIOLATION,
        /**
         * An AbortConn: FAILED with RESET_BY_PEER and a record; or, as Linux TCP, FINISHED when the stream
         * had already ended (after the rogue's DisConn: reads give EOF, record {@code connection.PEER_GONE}) or
         * when data of the rogue's was unread (reads give it, then the reset).
         */
        RESET,
        /** Longer than the engine's receive buffer: the device refuses it (LOC_LEN_ERR), FAILED with a record. */
        DEVICE,
        /** Depends on engine messages not seen yet: open, or FAILED with a record. */
        EITHER
    }

    /** A prediction. */
    record Expect(Fate fate, Violation violation) {
        static final Expect ACCEPT = new Expect(Fate.ACCEPT, null);

        static Expect violation(Violation v) {
            return new Expect(Fate.VIOLATION, v);
        }

        @Override
        public String toString() {
            return violation == null ? fate.name() : violation.name();
        }
    }

    /** What the engine connection has taken so far, as the rogue sent it. */
    static final class Model {
        final boolean rogueActive;
        boolean handshakeDone;
        boolean disconnSent;
        /** An AbortConn found the stream ended or data unread: FINISHED, not FAILED. */
        boolean endedByReset;
        /** The engine's highest accepted mseq_ack (its peerAck). */
        int ackFloor;
        /** Payloads of the Data messages the engine took, in order, and how many of their bytes it delivered. */
        final ByteArrayOutputStream payloads = new ByteArrayOutputStream();
        int delivered;

        Model(boolean rogueActive) {
            this.rogueActive = rogueActive;
            this.ackFloor = rogueActive ? -1 : 0;
        }
    }

    /** Drivers at once: each connection waits on the fabric's latency more than it computes. */
    static final int WORKERS = 4;

    @Test
    void tenThousandMutatedMessagesLeaveEveryConnectionOpenAndCorrectOrAbortedWithARecord() throws Exception {
        long seed = Long.getLong("jsdp.fuzz.seed", System.nanoTime());
        System.out.println("ProtocolFuzzTest seed " + seed + " (replay with -Djsdp.fuzz.seed=" + seed + ")");
        SplittableRandom root = new SplittableRandom(seed);
        long t0 = System.nanoTime();
        Worker[] workers = new Worker[WORKERS];
        try (RogueBench b = new RogueBench(ENGINE.copy(), true)) {
            EngineAcceptor acceptor = new EngineAcceptor(b.listenerE);
            ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
            try {
                List<Future<Void>> done = new ArrayList<>();
                for (int i = 0; i < WORKERS; i++) {
                    int quota = MUTATED_MESSAGES / WORKERS + (i < MUTATED_MESSAGES % WORKERS ? 1 : 0);
                    workers[i] = new Worker(i, seed, root.split(), quota, b, acceptor);
                    done.add(pool.submit(workers[i]));
                }
                for (Future<Void> f : done) {
                    try {
                        f.get(100, TimeUnit.SECONDS);
                    } catch (ExecutionException e) {
                        throw new AssertionError(e.getCause().getMessage(), e.getCause());
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            b.assertHealthyStillStreams();
            b.awaitConnections(1); // only the healthy connection is left: every fuzzed one was released
        }
        long connections = 0;
        long sent = 0;
        long mutated = 0;
        long aborted = 0;
        long accepted = 0;
        long endedByReset = 0;
        for (Worker w : workers) {
            endedByReset += w.endedByReset;
            connections += w.connections;
            sent += w.sent;
            mutated += w.mutated;
            aborted += w.aborted;
            accepted += w.accepted;
        }
        System.out.printf("ProtocolFuzzTest seed %d: %d connections, %d messages (%d mutated), %d connections aborted, "
            + "%d of them by a reset after the stream ended or with data unread, %d ended open and correct, %.1f s%n",
            seed, connections, sent, mutated, aborted, endedByReset, accepted, (System.nanoTime() - t0) / 1e9);
        check(mutated >= MUTATED_MESSAGES, "only " + mutated + " mutated messages");
    }

    /** Hands each worker the engine connection whose remote end is its rogue (workers share the listener). */
    static final class EngineAcceptor {
        private final SdpListener listener;
        private final Map<Integer, SdpConnection> parked = new HashMap<>();

        EngineAcceptor(SdpListener listener) {
            this.listener = listener;
        }

        synchronized SdpConnection acceptFor(int port) throws InterruptedException {
            long deadline = System.nanoTime() + OUTCOME_NS;
            for (;;) {
                SdpConnection c = parked.remove(port);
                if (c != null) {
                    return c;
                }
                c = listener.accept();
                if (c != null) {
                    parked.put(c.remoteAddress().getPort(), c);
                    continue;
                }
                check(System.nanoTime() - deadline < 0, "the engine accepted no connection from port " + port + " within 5 s");
                wait(1);
            }
        }
    }

    /** One driver: its own rogue listener and random stream, connections one after another. */
    static final class Worker implements Callable<Void> {
        private final int index;
        private final long seed;
        private final SplittableRandom rnd;
        private final int quota;
        private final RogueBench b;
        private final EngineAcceptor acceptor;
        long mutated;
        long connections;
        long accepted;
        long aborted;
        long sent;
        long endedByReset;

        Worker(int index, long seed, SplittableRandom rnd, int quota, RogueBench b, EngineAcceptor acceptor) {
            this.index = index;
            this.seed = seed;
            this.rnd = rnd;
            this.quota = quota;
            this.b = b;
            this.acceptor = acceptor;
        }

        @Override
        public Void call() throws Exception {
            try (RogueListener rl = new RogueListener(b.pdR)) {
                while (mutated < quota) {
                    long c = connections++;
                    try {
                        runConnection(rl, c % 2 == 0);
                    } catch (AssertionError | Exception e) {
                        throw new AssertionError("seed " + seed + ", worker " + index + ", connection " + c + ": "
                            + e.getMessage(), e);
                    }
                }
            }
            return null;
        }

        private void runConnection(RogueListener rl, boolean rogueActive) throws Exception {
            Model model = new Model(rogueActive);
            double mutationRate = 0.2 + rnd.nextDouble() * 0.5;
            RoguePeer r = null;
            SdpConnection engine = null;
            try {
                // ---- handshake
                ByteBuffer first;
                if (rogueActive) {
                    r = RoguePeer.connect(b.pdR, b.listenerE.localAddress(), ROGUE);
                    first = r.hello();
                } else {
                    engine = b.stackE.connect(rl.address(), b.engineOptions);
                    r = rl.accept(ROGUE);
                    RoguePeer.Message hello = r.receive(OUTCOME_NS);
                    check(hello != null && hello.mid() == MessageId.HELLO, "expected the engine's Hello, got " + hello);
                    first = r.helloAck();
                }
                byte[] msg = maybeMutate(rnd, mutationRate, bytes(first), model, r);
                Expect e = handshakeOracle(msg, model);
                r.sendRaw(ByteBuffer.wrap(msg));
                sent++;
                if (e.fate() != Fate.ACCEPT) {
                    if (rogueActive) {
                        expectPassiveHandshakeFailure(r, e);
                    } else {
                        expectFailure(engine, r, e, model);
                    }
                    aborted++;
                    return;
                }
                r.sent(ByteBuffer.wrap(msg));
                model.handshakeDone = true;
                if (rogueActive) {
                    RoguePeer.Message ack = r.receive(OUTCOME_NS);
                    check(ack != null && ack.mid() == MessageId.HELLO_ACK, "expected a HelloAck for " + describe(msg)
                        + ", got " + ack + " (" + r.describeEnd() + ")");
                    engine = acceptor.acceptFor(r.localAddress().getPort());
                } else {
                    check(engine.awaitConnected(OUTCOME_NS), "a valid HelloAck " + describe(msg) + " was refused: "
                        + engine.failureDetail());
                }
                // ---- traffic
                int messages = 1 + rnd.nextInt(8);
                for (int i = 0; i < messages; i++) {
                    byte[] valid = nextValidMessage(rnd, r, engine, model);
                    msg = maybeMutate(rnd, mutationRate, valid, model, r);
                    e = oracle(msg, model, r);
                    WcStatus s = r.sendRaw(ByteBuffer.wrap(msg));
                    sent++;
                    check(s == WcStatus.SUCCESS || e.fate() == Fate.DEVICE, "the rogue's send of " + describe(msg)
                        + " failed: " + s);
                    // the rogue's send completed, so the message is in the engine's queue: readyOps takes it
                    engine.readyOps();
                    if (engine.state() == SdpConnection.State.FAILED || e.fate() != Fate.ACCEPT && e.fate() != Fate.EITHER) {
                        expectFailure(engine, r, e, model);
                        aborted++;
                        endedByReset += model.endedByReset ? 1 : 0;
                        return;
                    }
                    apply(msg, model, r);
                    drain(engine, model, e);
                }
                // ---- still open: everything delivered is exactly what was accepted, and it still works both ways
                finalCheck(engine, r, model);
                accepted++;
            } finally {
                if (engine != null) {
                    engine.abort();
                }
                if (r != null) {
                    r.close();
                }
                if (engine != null) {
                    check(engine.awaitReleased(OUTCOME_NS), "the engine connection was not released");
                }
            }
        }

        private byte[] maybeMutate(SplittableRandom rnd, double rate, byte[] valid, Model model, RoguePeer r) {
            if (rnd.nextDouble() >= rate) {
                return valid;
            }
            mutated++;
            return mutate(rnd, valid, model.handshakeDone, r);
        }
    }

    // ------------------------------------------------------------------ valid traffic

    private static byte[] nextValidMessage(SplittableRandom rnd, RoguePeer r, SdpConnection engine, Model model)
        throws InterruptedException {
        int roll = rnd.nextInt(100);
        if (!model.disconnSent && roll < 75) {
            awaitCredits(r, engine, model, 2);
            byte[] payload = new byte[rnd.nextInt(100) < 80 ? 1 + rnd.nextInt(64) : 1 + rnd.nextInt(MAX_PAYLOAD)];
            rnd.nextBytes(payload);
            return bytes(r.data(payload));
        }
        if (!model.disconnSent && roll < 85) {
            awaitCredits(r, engine, model, 2);
            return bytes(r.disconn());
        }
        awaitCredits(r, engine, model, 1);
        return bytes(r.creditUpdate());
    }

    /** Lets the engine's application read (its buffers go back) until the rogue has {@code need} credits. */
    private static void awaitCredits(RoguePeer r, SdpConnection engine, Model model, int need) throws InterruptedException {
        long deadline = System.nanoTime() + OUTCOME_NS;
        r.pump();
        while (r.credits() < need) {
            drain(engine, model, Expect.ACCEPT);
            check(engine.state() != SdpConnection.State.FAILED, "the engine failed while the rogue waited for credits: "
                + engine.failureDetail());
            r.pump();
            check(System.nanoTime() - deadline < 0, "no credits for the rogue within 5 s (a credit deadlock): rogue "
                + r.credits() + "\n" + engine.snapshot());
            engine.await(SdpConnection.OP_READ, TimeUnit.MICROSECONDS.toNanos(100));
        }
    }

    /** The engine's application reads whatever has arrived; bytes must be the accepted payloads, in order. */
    private static void drain(SdpConnection engine, Model model, Expect e) {
        ByteBuffer dst = ByteBuffer.allocate(8192);
        for (;;) {
            dst.clear();
            int n = engine.read(dst);
            if (n <= 0) {
                return;
            }
            byte[] sentPayloads = model.payloads.toByteArray();
            check(model.delivered + n <= sentPayloads.length, "the engine delivered bytes nobody sent (" + e + ")");
            check(Arrays.equals(dst.array(), 0, n, sentPayloads, model.delivered, model.delivered + n),
                "the engine delivered bytes that differ from those sent, at stream offset " + model.delivered);
            model.delivered += n;
        }
    }

    private static void apply(byte[] msg, Model model, RoguePeer r) {
        ByteBuffer m = ByteBuffer.wrap(msg).order(ByteOrder.BIG_ENDIAN);
        r.sent(m);
        model.ackFloor = m.getInt(Bsdh.MSEQ_ACK_OFFSET);
        int mid = msg[Bsdh.MID_OFFSET] & 0xFF;
        if (mid == MessageId.DATA) {
            model.payloads.write(msg, Bsdh.LENGTH, msg.length - Bsdh.LENGTH);
        } else if (mid == MessageId.DISCONN) {
            model.disconnSent = true;
        }
    }

    private static void finalCheck(SdpConnection engine, RoguePeer r, Model model) throws Exception {
        byte[] marker = {'e', 'n', 'd'};
        if (!model.disconnSent) {
            awaitCredits(r, engine, model, 2);
            byte[] m = bytes(r.data(marker));
            check(r.sendRaw(ByteBuffer.wrap(m)) == WcStatus.SUCCESS, "final data");
            apply(m, model, r);
        } else {
            awaitCredits(r, engine, model, 1);
            byte[] m = bytes(r.creditUpdate()); // tells the engine our real buffers whatever a mutation claimed
            check(r.sendRaw(ByteBuffer.wrap(m)) == WcStatus.SUCCESS, "final credit update");
            apply(m, model, r);
        }
        long deadline = System.nanoTime() + OUTCOME_NS;
        while (model.delivered < model.payloads.size()) {
            drain(engine, model, Expect.ACCEPT);
            check(engine.state() == SdpConnection.State.ESTABLISHED, "the engine failed before delivering everything: "
                + engine.failureDetail());
            check(System.nanoTime() - deadline < 0, "the engine delivered " + model.delivered + " of "
                + model.payloads.size() + " bytes within 5 s");
            engine.await(SdpConnection.OP_READ, TimeUnit.MILLISECONDS.toNanos(10));
        }
        if (model.disconnSent) {
            check(Blocking.read(engine, ByteBuffer.allocate(1)) == SdpConnection.EOF, "EOF after the rogue's DisConn");
        }
        check(engine.state() == SdpConnection.State.ESTABLISHED, "open after a valid exchange: " + engine.failureDetail());
        byte[] back = {'o', 'k', (byte) r.nextMseq()};
        Blocking.writeFully(engine, ByteBuffer.wrap(back));
        RoguePeer.Message m = r.receiveSkippingCreditUpdates(OUTCOME_NS);
        check(m != null && m.mid() == MessageId.DATA && Arrays.equals(back, m.payload()), "the engine's data, got " + m
            + " (" + r.describeEnd() + ")");
    }

    // ------------------------------------------------------------------ failures

    private static void expectFailure(SdpConnection engine, RoguePeer r, Expect e, Model model)
        throws InterruptedException {
        check(e.fate() != Fate.ACCEPT, "a message the engine must take failed it: " + engine.failureDetail());
        engine.await(SdpConnection.OP_READ | SdpConnection.OP_ENDED, OUTCOME_NS);
        if (e.fate() == Fate.RESET && engine.state() == SdpConnection.State.FINISHED) {
            expectResetAfterEnd(engine, r, model);
            model.endedByReset = true;
            return;
        }
        check(engine.state() == SdpConnection.State.FAILED, "expected " + e + ", the engine connection is " + engine.state()
            + "\n" + engine.snapshot());
        Failure f = engine.failure();
        String kind;
        switch (e.fate()) {
            case VIOLATION -> {
                check(f == Failure.PROTOCOL_VIOLATION, "expected " + e + ", failed with " + engine.failureDetail());
                kind = "protocol." + e.violation().name();
            }
            case RESET -> {
                check(f == Failure.RESET_BY_PEER, "expected a reset, failed with " + engine.failureDetail());
                kind = "connection." + f.name();
            }
            case DEVICE -> {
                check(f == Failure.DEVICE_ERROR, "expected a device error, failed with " + engine.failureDetail());
                kind = "connection." + f.name();
            }
            default -> kind = null; // any record naming the connection
        }
        requireRecord(kind, "connection " + engine.id() + " ", null);
        check(r.awaitAbort(OUTCOME_NS), "the rogue saw no abort: " + r.describeEnd());
    }

    /**
     * An AbortConn that found the rogue's stream ended (its DisConn taken) or its data unread: the engine
     * keeps what arrived readable, then EOF (after a DisConn) or the reset; writes fail at once.
     */
    private static void expectResetAfterEnd(SdpConnection engine, RoguePeer r, Model model) throws InterruptedException {
        check(engine.failure() == Failure.RESET_BY_PEER, "expected a reset, ended with " + engine.failureDetail());
        boolean unread = model.delivered < model.payloads.size();
        check(model.disconnSent || unread, "FINISHED by an AbortConn with the stream open and nothing unread: "
            + engine.failureDetail());
        requireRecord(model.disconnSent ? "connection.PEER_GONE" : "connection." + Failure.RESET_BY_PEER.name(),
            "connection " + engine.id() + " ", null);
        check(engine.write(ByteBuffer.wrap(new byte[] {1})) == SdpConnection.FAILED, "a write after the reset");
        drain(engine, model, new Expect(Fate.RESET, null));
        check(model.delivered == model.payloads.size(), "the engine delivered " + model.delivered + " of "
            + model.payloads.size() + " bytes before the end");
        int end = engine.read(ByteBuffer.allocate(1));
        check(end == (model.disconnSent ? SdpConnection.EOF : SdpConnection.FAILED), "after the data: "
            + (model.disconnSent ? "EOF" : "the reset") + " expected, read gave " + end);
        check(r.awaitAbort(OUTCOME_NS), "the rogue saw no end once everything was read: " + r.describeEnd());
    }

    private static void expectPassiveHandshakeFailure(RoguePeer r, Expect e) throws InterruptedException {
        String kind = switch (e.fate()) {
            case VIOLATION -> "protocol." + e.violation().name();
            case DEVICE -> "connection." + Failure.DEVICE_ERROR.name();
            default -> throw new AssertionError("no such handshake outcome " + e);
        };
        String port = ":" + r.localAddress().getPort();
        long deadline = System.nanoTime() + OUTCOME_NS;
        while (!hasRecord(kind, null, port)) {
            check(System.nanoTime() - deadline < 0, "no FFDC record " + kind + " for the engine's passive connection from "
                + "port " + port + "; recent:" + RogueBench.recentSummaries());
            Thread.sleep(1);
        }
        check(r.awaitAbort(OUTCOME_NS), "the rogue saw no abort: " + r.describeEnd());
    }

    private static void requireRecord(String kind, String summaryPrefix, String remotePort) {
        check(hasRecord(kind, summaryPrefix, remotePort), "no FFDC record " + (kind == null ? "" : kind) + " for "
            + summaryPrefix + "; recent:" + RogueBench.recentSummaries());
    }

    private static boolean hasRecord(String kind, String summaryPrefix, String remotePort) {
        for (FfdcRecord rec : Ffdc.find("", summaryPrefix == null ? remotePort : summaryPrefix)) {
            boolean kindOk = kind == null ? rec.kind().startsWith("protocol.") || rec.kind().startsWith("connection.")
                : rec.kind().equals(kind);
            boolean who = summaryPrefix != null ? rec.summary().startsWith(summaryPrefix)
                : rec.snapshot().contains(" passive ") && Arrays.stream(rec.snapshot().split("\n"))
                    .anyMatch(l -> l.startsWith("local ") && l.endsWith(remotePort));
            if (kindOk && who) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ the oracle (sdp-wire.md C.1–C.7)

    /** The fate of the Hello (rogue active) or HelloAck (rogue passive). */
    static Expect handshakeOracle(byte[] msg, Model model) {
        int n = msg.length;
        if (n > ENGINE_BUFFER_BYTES) {
            return new Expect(Fate.DEVICE, null);
        }
        if (n < Bsdh.LENGTH) {
            return Expect.violation(Violation.SHORT_MESSAGE);
        }
        ByteBuffer m = ByteBuffer.wrap(msg).order(ByteOrder.BIG_ENDIAN);
        int mid = msg[0] & 0xFF;
        if ((m.getInt(Bsdh.LEN_OFFSET) & 0xFFFF_FFFFL) != n) {
            return Expect.violation(Violation.LENGTH_MISMATCH);
        }
        int expectedMid = model.rogueActive ? MessageId.HELLO : MessageId.HELLO_ACK;
        if (mid == expectedMid && m.getInt(Bsdh.MSEQ_OFFSET) == 0) {
            int bufs = m.getShort(Bsdh.BUFS_OFFSET) & 0xFFFF;
            int minLength = model.rogueActive ? Hello.LENGTH : HelloAck.LENGTH;
            if (n < minLength) {
                return Expect.violation(Violation.BAD_HELLO);
            }
            int version = (msg[Hello.VERSION_OFFSET] & 0xF0) >>> 4;
            int adverts = msg[Hello.MAX_ADVERTS_OFFSET] & 0xFF;
            long size = m.getInt(model.rogueActive ? Hello.LOCAL_RCVSZ_OFFSET : HelloAck.ACTUAL_RCVSZ_OFFSET) & 0xFFFF_FFFFL;
            boolean bad = version != Hello.VERSION >>> 4 || adverts == 0 || size < SdpOptions.BUFFER_BYTES_MIN
                || size > SdpOptions.BUFFER_BYTES_MAX || bufs > CreditFlowControl.MAX_BUFS || model.rogueActive && bufs < 1;
            if (bad) {
                return Expect.violation(Violation.BAD_HELLO);
            }
            // capabilities (issue 8): one known scheme at most; the engine asks for ENGINE's scheme
            FlowControlScheme wish = ENGINE.flowControl();
            FlowControlScheme asked = FlowControlScheme.fromCapabilities(m.getInt(model.rogueActive
                ? Hello.CAPABILITIES_OFFSET : HelloAck.CAPABILITIES_OFFSET));
            if (asked == null || !model.rogueActive && asked != FlowControlScheme.CREDIT && asked != wish) {
                return Expect.violation(Violation.BAD_CAPABILITIES);
            }
            FlowControlScheme used = model.rogueActive ? FlowControlScheme.negotiate(asked, wish) : asked;
            long ring = m.getInt(model.rogueActive ? Hello.RING_BYTES_OFFSET : HelloAck.RING_BYTES_OFFSET) & 0xFFFF_FFFFL;
            if (used == FlowControlScheme.PACKETIZED && !PacketizedFlowControl.validRingBytes(ring)) {
                return Expect.violation(Violation.BAD_RING);
            }
            return Expect.ACCEPT;
        }
        if (mid == MessageId.HELLO || mid == MessageId.HELLO_ACK) {
            return Expect.violation(Violation.SECOND_HELLO);
        }
        if (!MessageId.isDefined(mid)) {
            return Expect.violation(Violation.UNKNOWN_MID);
        }
        return Expect.violation(Violation.DATA_BEFORE_HELLO);
    }

    /** The fate of a message after the handshake. */
    static Expect oracle(byte[] msg, Model model, RoguePeer r) {
        int n = msg.length;
        if (n > ENGINE_BUFFER_BYTES) {
            return new Expect(Fate.DEVICE, null);
        }
        if (n < Bsdh.LENGTH) {
            return Expect.violation(Violation.SHORT_MESSAGE);
        }
        ByteBuffer m = ByteBuffer.wrap(msg).order(ByteOrder.BIG_ENDIAN);
        if ((m.getInt(Bsdh.LEN_OFFSET) & 0xFFFF_FFFFL) != n) {
            return Expect.violation(Violation.LENGTH_MISMATCH);
        }
        int mid = msg[0] & 0xFF;
        if (mid == MessageId.HELLO || mid == MessageId.HELLO_ACK) {
            return Expect.violation(Violation.SECOND_HELLO);
        }
        if (!MessageId.isDefined(mid)) {
            return Expect.violation(Violation.UNKNOWN_MID);
        }
        if (m.getInt(Bsdh.MSEQ_OFFSET) != r.nextMseq()) {
            return Expect.violation(Violation.MSEQ_OUT_OF_ORDER);
        }
        if ((m.getShort(Bsdh.BUFS_OFFSET) & 0xFFFF) > CreditFlowControl.MAX_BUFS) {
            return Expect.violation(Violation.BUFS_OUT_OF_RANGE);
        }
        int ack = m.getInt(Bsdh.MSEQ_ACK_OFFSET);
        if (ack - model.ackFloor < 0) {
            return Expect.violation(Violation.ACK_OUT_OF_RANGE);
        }
        if (ack - r.lastReceivedMseq() > 0) {
            return new Expect(Fate.EITHER, null); // the engine may have sent it; the rogue has not seen it yet
        }
        boolean creditUpdate = mid == MessageId.DATA && n == Bsdh.LENGTH;
        if (r.creditsAcking(ack) < (creditUpdate ? 1 : 2)) {
            return Expect.violation(Violation.NO_CREDIT);
        }
        return switch (mid) {
            case MessageId.DATA -> n > Bsdh.LENGTH && model.disconnSent ? Expect.violation(Violation.DATA_AFTER_DISCONN)
                : Expect.ACCEPT;
            case MessageId.DISCONN -> n > Bsdh.LENGTH ? Expect.violation(Violation.PAYLOAD_ON_CONTROL)
                : model.disconnSent ? Expect.violation(Violation.DATA_AFTER_DISCONN) : Expect.ACCEPT;
            case MessageId.ABORT_CONN -> n > Bsdh.LENGTH ? Expect.violation(Violation.PAYLOAD_ON_CONTROL)
                : new Expect(Fate.RESET, null);
            default -> Expect.violation(Violation.UNSUPPORTED_MID);
        };
    }

    // ------------------------------------------------------------------ mutations

    static byte[] mutate(SplittableRandom rnd, byte[] valid, boolean afterHandshake, RoguePeer r) {
        byte[] m = valid.clone();
        ByteBuffer b = ByteBuffer.wrap(m).order(ByteOrder.BIG_ENDIAN);
        switch (rnd.nextInt(afterHandshake ? 7 : 8)) {
            case 0 -> { // flip one to three bits anywhere
                for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
                    int at = rnd.nextInt(m.length);
                    m[at] ^= (byte) (1 << rnd.nextInt(8));
                }
            }
            case 1 -> m[rnd.nextInt(Math.min(m.length, Bsdh.LENGTH + 8))] = (byte) rnd.nextInt(256);
            case 2 -> { // a BSDH field set to an edge value
                switch (rnd.nextInt(6)) {
                    case 0 -> m[Bsdh.MID_OFFSET] = (byte) rnd.nextInt(256);
                    case 1 -> m[Bsdh.FLAGS_OFFSET] = (byte) rnd.nextInt(256);
                    case 2 -> b.putShort(Bsdh.BUFS_OFFSET, (short) edge(rnd, b.getShort(Bsdh.BUFS_OFFSET) & 0xFFFF,
                        CreditFlowControl.MAX_BUFS));
                    case 3 -> b.putInt(Bsdh.LEN_OFFSET, edge(rnd, m.length, ENGINE_BUFFER_BYTES));
                    case 4 -> b.putInt(Bsdh.MSEQ_OFFSET, edge(rnd, b.getInt(Bsdh.MSEQ_OFFSET), Integer.MAX_VALUE));
                    default -> b.putInt(Bsdh.MSEQ_ACK_OFFSET, edge(rnd, b.getInt(Bsdh.MSEQ_ACK_OFFSET),
                        r.lastReceivedMseq() + 2));
                }
            }
            case 3 -> { // cut short, BSDH len left as it was
                return Arrays.copyOf(m, rnd.nextInt(m.length));
            }
            case 4 -> { // grown, now and then past the engine's buffer
                int more = rnd.nextInt(10) == 0 ? ENGINE_BUFFER_BYTES : 1 + rnd.nextInt(64);
                byte[] g = Arrays.copyOf(m, m.length + more);
                return g;
            }
            case 5 -> { // a different length with a BSDH that agrees: a well-formed message of another size
                byte[] g = Arrays.copyOf(m, Bsdh.LENGTH + rnd.nextInt(rnd.nextBoolean() ? 64 : MAX_PAYLOAD + 1));
                ByteBuffer.wrap(g).order(ByteOrder.BIG_ENDIAN).putInt(Bsdh.LEN_OFFSET, g.length);
                return g;
            }
            case 6 -> { // junk
                byte[] g = new byte[rnd.nextInt(rnd.nextBoolean() ? Bsdh.LENGTH + 1 : 256)];
                rnd.nextBytes(g);
                return g;
            }
            default -> { // a Hello / HelloAck field set to an edge value
                switch (rnd.nextInt(5)) {
                    case 4 -> b.putInt(m.length == Hello.LENGTH ? Hello.CAPABILITIES_OFFSET : HelloAck.CAPABILITIES_OFFSET,
                        rnd.nextInt(8));
                    case 0 -> m[Hello.VERSION_OFFSET] = (byte) rnd.nextInt(256);
                    case 1 -> m[Hello.MAX_ADVERTS_OFFSET] = (byte) (rnd.nextBoolean() ? 0 : rnd.nextInt(256));
                    case 2 -> b.putInt(m.length == Hello.LENGTH ? Hello.LOCAL_RCVSZ_OFFSET : HelloAck.ACTUAL_RCVSZ_OFFSET,
                        edge(rnd, SdpOptions.BUFFER_BYTES_MIN, SdpOptions.BUFFER_BYTES_MAX));
                    default -> m[Hello.IP_VERSION_OFFSET] = (byte) rnd.nextInt(256);
                }
            }
        }
        return m;
    }

    /** A value near a boundary: 0, ±1 around {@code near} or {@code limit}, the extremes, or random. */
    static int edge(SplittableRandom rnd, int near, int limit) {
        return switch (rnd.nextInt(8)) {
            case 0 -> 0;
            case 1 -> near - 1;
            case 2 -> near + 1;
            case 3 -> limit;
            case 4 -> limit + 1;
            case 5 -> limit - 1;
            case 6 -> rnd.nextBoolean() ? -1 : Integer.MIN_VALUE;
            default -> rnd.nextInt();
        };
    }

    // ------------------------------------------------------------------ helpers

    static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    static String describe(byte[] msg) {
        if (msg.length < Bsdh.LENGTH) {
            return msg.length + "-byte message";
        }
        Bsdh h = new Bsdh().wrap(ByteBuffer.wrap(msg), 0);
        return MessageId.name(h.mid()) + "(len " + h.len() + "/" + msg.length + " mseq " + h.mseq() + " ack " + h.mseqAck()
            + " bufs " + h.bufs() + ")";
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }
}
