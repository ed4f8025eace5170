package io.jsdp.flow.engine.rogue;

import static io.jsdp.flow.engine.rogue.RogueBench.OUTCOME_NS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.Blocking;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 8: a rogue that speaks packetized flow control (its capability bit, a ring of its own, RDMA
 * WRITEs into the engine's ring and RingData/RingAck messages) and breaks it — writes that do not
 * start at the ring's next free byte, overrun the free space or land outside the ring, consumed counts
 * beyond what was written, bad capability bits and ring advertisements, and a ring advertisement whose
 * rkey does not work. Each aborts only that connection with an FFDC record, while the bench's healthy
 * packetized connection keeps streaming.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RingRoguePeerTest {
    private static final int ROGUE_RING = 64 * 1024;
    private static final int PACKETIZED = FlowControlScheme.PACKETIZED.capabilityBit();

    private static RogueBench bench(FlowControlScheme scheme) throws Exception {
        return new RogueBench(RoguePeerViolationTest.ENGINE.copy().flowControl(scheme), true);
    }

    /** A rogue with a ring, connected to the engine's listener, its Hello sent, the engine's HelloAck read. */
    private record Ring(Attack attack, long address, int rkey, int bytes) implements AutoCloseable {
        @Override
        public void close() {
            attack.close();
        }

        RoguePeer rogue() {
            return attack.rogue();
        }

        SdpConnection engine() {
            return attack.engine();
        }
    }

    private static Ring packetizedActive(RogueBench b, int rkeyXor) throws Exception {
        return packetizedActive(b, rkeyXor, false);
    }

    /** As above; {@code inline}: the rogue's Hello also offers runs carried inside RingData. */
    private static Ring packetizedActive(RogueBench b, int rkeyXor, boolean inline) throws Exception {
        RoguePeer r = RoguePeer.connect(b.pdR, b.listenerE.localAddress(), new RoguePeer.Options().ringBytes(ROGUE_RING));
        int asked = PACKETIZED | (inline ? FlowControlScheme.CAPABILITY_RING_INLINE : 0);
        try {
            r.sendValid(r.hello(asked, r.ringRkey() ^ rkeyXor, ROGUE_RING));
            RoguePeer.Message ack = r.receive(OUTCOME_NS);
            if (ack == null || ack.mid() != MessageId.HELLO_ACK) {
                throw new AssertionError("expected a HelloAck, got " + ack);
            }
            HelloAck h = new HelloAck().wrap(ByteBuffer.wrap(ack.bytes()).order(ByteOrder.BIG_ENDIAN), 0);
            assertEquals(asked, h.capabilities(), "the engine agreed to packetized (and inline runs when offered)");
            SdpConnection engine = b.acceptEngine();
            assertEquals(FlowControlScheme.PACKETIZED, engine.flowControlScheme());
            return new Ring(new Attack(r, engine, null), h.ringAddress(), h.ringRkey(), (int) h.ringBytes());
        } catch (Exception | AssertionError e) {
            r.close();
            throw e;
        }
    }

    private static void expectAbort(RogueBench b, Attack a, Violation v) throws InterruptedException {
        RogueBench.assertViolation(a.engine(), v);
        assertTrue(a.rogue().awaitAbort(OUTCOME_NS), "the rogue saw no abort: " + a.rogue().describeEnd());
        assertTrue(a.engine().awaitReleased(OUTCOME_NS), "the aborted connection is released");
        b.assertHealthyStillStreams();
        b.assertNoHandlerFailures();
    }

    private static void expectHandshakeAbort(RogueBench b, Attack a, Violation v) throws InterruptedException {
        b.assertHandshakeViolation(a.rogue(), v, 1);
        assertTrue(a.rogue().awaitAbort(OUTCOME_NS), "the rogue saw no abort: " + a.rogue().describeEnd());
        b.assertHealthyStillStreams();
        b.assertNoHandlerFailures();
    }

    // ------------------------------------------------------------------ the rogue speaks it right

    @Test
    void engineReadsWhatARogueWritesIntoItsRingAndWritesIntoTheRoguesRing() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            byte[] hello = "hello, ring".getBytes(StandardCharsets.US_ASCII);
            assertEquals(WcStatus.SUCCESS, g.rogue().rdmaWrite(g.address(), g.rkey(), hello));
            assertEquals(WcStatus.SUCCESS, g.rogue().sendValid(g.rogue().ringData(0, hello.length, 0)));
            ByteBuffer got = ByteBuffer.allocate(hello.length);
            Blocking.readFully(g.engine(), got);
            assertArrayEquals(hello, got.array());
            Blocking.writeFully(g.engine(), ByteBuffer.wrap(new byte[] {1, 2, 3}));
            RoguePeer.Message note = g.rogue().receiveSkippingCreditUpdates(OUTCOME_NS);
            assertEquals(MessageId.RING_DATA, note.mid(), "the engine tells where it wrote: " + note);
            assertEquals(28, note.bytes().length, "a peer that did not offer inline runs gets the run by WRITE: " + note);
            ByteBuffer n = ByteBuffer.wrap(note.bytes()).order(ByteOrder.BIG_ENDIAN);
            assertEquals(0, n.getInt(16), "offset");
            assertEquals(3, n.getInt(20), "length");
            assertEquals(hello.length, n.getInt(24), "consumed: the engine read our bytes");
            assertEquals(SdpConnection.State.ESTABLISHED, g.engine().state());
        }
    }

    @Test
    void engineReadsARunCarriedInlineInTheRingDataAndSendsShortRunsSoItself() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0, true)) {
            byte[] first = "by WRITE".getBytes(StandardCharsets.US_ASCII);
            byte[] second = "inline, wrapping nothing".getBytes(StandardCharsets.US_ASCII);
            assertEquals(WcStatus.SUCCESS, g.rogue().rdmaWrite(g.address(), g.rkey(), first));
            assertEquals(WcStatus.SUCCESS, g.rogue().sendValid(g.rogue().ringData(0, first.length, 0)));
            assertEquals(WcStatus.SUCCESS, g.rogue().sendValid(g.rogue().ringData(first.length, second.length, 0, second)));
            ByteBuffer got = ByteBuffer.allocate(first.length + second.length);
            Blocking.readFully(g.engine(), got);
            assertEquals("by WRITEinline, wrapping nothing", new String(got.array(), StandardCharsets.US_ASCII));
            Blocking.writeFully(g.engine(), ByteBuffer.wrap(new byte[] {7, 8, 9}));
            RoguePeer.Message note = g.rogue().receiveSkippingCreditUpdates(OUTCOME_NS);
            assertEquals(MessageId.RING_DATA, note.mid(), "the engine tells where it wrote: " + note);
            assertEquals(28 + 3, note.bytes().length, "a 3-byte run goes inside its RingData: " + note);
            ByteBuffer n = ByteBuffer.wrap(note.bytes()).order(ByteOrder.BIG_ENDIAN);
            assertEquals(0, n.getInt(16), "offset");
            assertEquals(3, n.getInt(20), "length");
            assertEquals(7, n.get(28));
            assertEquals(9, n.get(30));
            assertEquals(SdpConnection.State.ESTABLISHED, g.engine().state());
        }
    }

    @Test
    void abortsConnectionOnRingDataWhoseInlineBytesDisagreeWithItsLengthAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0, true)) {
            Attack a = g.attack();
            a.raw(g.rogue().ringData(0, 10, 0, new byte[4]));
            expectAbort(b, a, Violation.LENGTH_MISMATCH);
        }
    }

    @Test
    void abortsConnectionOnAnInlineRunFromAPeerThatDidNotNegotiateThemAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0, false)) {
            Attack a = g.attack();
            a.raw(g.rogue().ringData(0, 4, 0, new byte[4]));
            expectAbort(b, a, Violation.LENGTH_MISMATCH);
        }
    }

    // ------------------------------------------------------------------ ring violations

    @Test
    void abortsConnectionOnRingDataNotAtTheNextFreeByteAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            assertEquals(WcStatus.SUCCESS, g.rogue().rdmaWrite(g.address() + 100, g.rkey(), new byte[10]));
            a.raw(g.rogue().ringData(100, 10, 0));
            expectAbort(b, a, Violation.RING_OUT_OF_ORDER);
        }
    }

    @Test
    void abortsConnectionOnRingDataBeyondTheFreeSpaceAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            a.raw(g.rogue().ringData(0, g.bytes() + 1, 0));
            expectAbort(b, a, Violation.RING_OVERRUN);
        }
    }

    @Test
    void abortsConnectionOnRingAckReturningSpaceNeverWrittenAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            a.raw(g.rogue().ringAck(4096));
            expectAbort(b, a, Violation.RING_ACK_OUT_OF_RANGE);
        }
    }

    @Test
    void abortsConnectionOnRingDataReturningMoreThanWasConsumedAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            Blocking.writeFully(g.engine(), ByteBuffer.wrap(new byte[100]));
            assertEquals(MessageId.RING_DATA, g.rogue().receiveSkippingCreditUpdates(OUTCOME_NS).mid());
            assertEquals(WcStatus.SUCCESS, g.rogue().rdmaWrite(g.address(), g.rkey(), new byte[8]));
            a.raw(g.rogue().ringData(0, 8, 101)); // the engine wrote 100 bytes into our ring
            expectAbort(b, a, Violation.RING_ACK_OUT_OF_RANGE);
        }
    }

    @Test
    void abortsConnectionOnDataWithPayloadOnAPacketizedConnectionAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            a.raw(g.rogue().data(new byte[20]));
            expectAbort(b, a, Violation.UNSUPPORTED_MID);
        }
    }

    @Test
    void abortsConnectionOnRingDataToACreditConnectionAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.CREDIT); Attack a = Attack.active(b)) {
            a.raw(a.rogue().ringData(0, 10, 0));
            expectAbort(b, a, Violation.UNKNOWN_MID);
        }
    }

    @Test
    void aRogueWritingOutsideTheRingIsRefusedAndOnlyItsConnectionEnds() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            WcStatus s = g.rogue().rdmaWrite(g.address() + g.bytes() - 8, g.rkey(), new byte[64]);
            assertNotEquals(WcStatus.SUCCESS, s, "the device refuses a write past the ring's end");
            assertTrue(g.engine().awaitReleased(OUTCOME_NS), "the engine's connection ends: " + g.engine().snapshot());
            // Its queue pair was flushed by the device (a responder's access error); without an asynchronous
            // event the engine cannot tell that from a vanished peer, so it records whichever it concludes.
            String prefix = "connection " + g.engine().id() + " ";
            boolean recorded = false;
            for (FfdcRecord r : Ffdc.recent()) {
                recorded |= r.summary().startsWith(prefix) && r.snapshot().contains("flow scheme=packetized");
            }
            assertTrue(recorded, "an FFDC record names the connection" + RogueBench.recentSummaries());
            assertTrue(a.rogue().awaitAbort(OUTCOME_NS), a.rogue().describeEnd());
            b.assertHealthyStillStreams();
            b.assertNoHandlerFailures();
        }
    }

    @Test
    void aRogueWritingJustPastTheRingsEndHitsItsStructureMarkerAndTheConnectionAbortsWithAnFfdcRecord() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0)) {
            Attack a = g.attack();
            // an off-by-a-few write: its last 8 bytes run over the ring's end, onto the marker there
            byte[] run = "twelve bytes".getBytes(StandardCharsets.US_ASCII);
            assertEquals(WcStatus.SUCCESS, g.rogue().rdmaWrite(g.address() + g.bytes() - 4, g.rkey(), run),
                "the ring's memory region covers its markers: the device lets the write through");
            assertEquals(WcStatus.SUCCESS, g.rogue().rdmaWrite(g.address(), g.rkey(), run));
            a.raw(g.rogue().ringData(0, run.length, 0));
            assertTrue(g.engine().awaitReleased(OUTCOME_NS), "the engine's connection ends: " + g.engine().snapshot());
            assertEquals(SdpConnection.State.FAILED, g.engine().state());
            assertEquals("CORRUPTION", g.engine().failure().name(), g.engine().failureDetail());
            String prefix = "connection " + g.engine().id() + " ";
            FfdcRecord record = null;
            for (FfdcRecord r : Ffdc.recent()) {
                if (r.kind().equals("corruption.RING") && r.summary().startsWith(prefix)) {
                    record = r;
                }
            }
            assertTrue(record != null, "a corruption.RING record names the connection" + RogueBench.recentSummaries());
            assertTrue(record.summary().contains("marker 1 (after the ring's " + g.bytes() + " bytes)"), record.summary());
            assertTrue(record.summary().contains(" [76 65 20 62 79 74 65 73]"), "the bytes that landed on it (\"ve bytes\"): "
                + record.summary());
            assertTrue(record.snapshot().contains("flow scheme=packetized"), record.snapshot());
            assertTrue(a.rogue().awaitAbort(OUTCOME_NS), a.rogue().describeEnd());
            b.assertHealthyStillStreams();
            b.assertNoHandlerFailures();
        }
    }

    // ------------------------------------------------------------------ bad rkey

    @Test
    void abortsConnectionWhenTheRoguesRingRkeyDoesNotWorkAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Ring g = packetizedActive(b, 0x00A5_0000)) {
            Attack a = g.attack();
            int badRkey = g.rogue().ringRkey() ^ 0x00A5_0000;
            Blocking.writeFully(g.engine(), ByteBuffer.wrap(new byte[1024]));
            FfdcRecord r = RogueBench.assertViolation(g.engine(), Violation.BAD_RKEY);
            assertTrue(r.summary().contains("rkey 0x" + Integer.toHexString(badRkey)), r.summary());
            assertTrue(r.summary().contains("ring write"), r.summary());
            assertTrue(r.snapshot().contains("flow scheme=packetized"), r.snapshot());
            assertTrue(a.rogue().awaitAbort(OUTCOME_NS), a.rogue().describeEnd());
            assertTrue(g.engine().awaitReleased(OUTCOME_NS));
            b.assertHealthyStillStreams();
            b.assertNoHandlerFailures();
        }
    }

    @Test
    void abortsActiveConnectionWhenTheRoguesHelloAckAdvertisesABadRkeyAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); RogueListener l = new RogueListener(b.pdR)) {
            SdpConnection c = b.stackE.connect(l.address(), b.engineOptions);
            RoguePeer r = l.accept(new RoguePeer.Options().ringBytes(ROGUE_RING));
            try (r) {
                assertEquals(MessageId.HELLO, r.receive(OUTCOME_NS).mid());
                r.sendValid(r.helloAck(PACKETIZED, 0x0BAD_0000, ROGUE_RING));
                assertTrue(c.awaitConnected(OUTCOME_NS), c::failureDetail);
                assertEquals(FlowControlScheme.PACKETIZED, c.flowControlScheme());
                // longer than a RingData carries inline: it goes by RDMA WRITE
                Blocking.writeFully(c, ByteBuffer.wrap(new byte[1024]));
                FfdcRecord rec = RogueBench.assertViolation(c, Violation.BAD_RKEY);
                assertTrue(rec.summary().contains("rkey 0xbad0000"), rec.summary());
                assertTrue(r.awaitAbort(OUTCOME_NS), r.describeEnd());
                b.assertHealthyStillStreams();
                b.assertNoHandlerFailures();
            }
        }
    }

    // ------------------------------------------------------------------ capabilities and ring advertisements

    @Test
    void abortsHandshakeOnUnknownCapabilityBitsAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Attack a = Attack.activeBeforeHello(b)) {
            a.raw(a.rogue().hello(1 << 7, 0, 0));
            expectHandshakeAbort(b, a, Violation.BAD_CAPABILITIES);
        }
    }

    @Test
    void abortsHandshakeOnTwoSchemesAskedAtOnceAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.NIC); Attack a = Attack.activeBeforeHello(b)) {
            a.raw(a.rogue().hello(FlowControlScheme.KNOWN_BITS, 0, 0));
            expectHandshakeAbort(b, a, Violation.BAD_CAPABILITIES);
        }
    }

    @Test
    void abortsHandshakeOnAnEmptyRingAdvertisementAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Attack a = Attack.activeBeforeHello(b)) {
            a.raw(a.rogue().hello(PACKETIZED, 1, 0));
            expectHandshakeAbort(b, a, Violation.BAD_RING);
        }
    }

    @Test
    void abortsConnectionOnAHelloAckPickingASchemeNotAskedForAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(FlowControlScheme.PACKETIZED); Attack a = Attack.passiveBeforeHelloAck(b)) {
            a.raw(a.rogue().helloAck(FlowControlScheme.NIC.capabilityBit(), 0, 0));
            expectAbort(b, a, Violation.BAD_CAPABILITIES);
        }
    }

    @Test
    void aSchemeAskedForByTheRogueAloneFallsBackToCredits() throws Exception {
        SdpOptions credit = RoguePeerViolationTest.ENGINE.copy();
        try (RogueBench b = new RogueBench(credit, false)) {
            RoguePeer r = RoguePeer.connect(b.pdR, b.listenerE.localAddress(), new RoguePeer.Options().ringBytes(ROGUE_RING));
            try (r) {
                r.sendValid(r.hello(PACKETIZED, r.ringRkey(), ROGUE_RING));
                RoguePeer.Message ack = r.receive(OUTCOME_NS);
                HelloAck h = new HelloAck().wrap(ByteBuffer.wrap(ack.bytes()).order(ByteOrder.BIG_ENDIAN), 0);
                assertEquals(0, h.capabilities(), "a credit-based engine answers with no bits");
                assertEquals(0, h.ringBytes(), "and advertises no ring");
                SdpConnection e = b.acceptEngine();
                assertEquals(FlowControlScheme.CREDIT, e.flowControlScheme());
                assertEquals(SdpConnection.State.ESTABLISHED, e.state());
            }
        }
    }
}
