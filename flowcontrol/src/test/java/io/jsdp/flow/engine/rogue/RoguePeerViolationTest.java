package io.jsdp.flow.engine.rogue;

import static io.jsdp.flow.engine.rogue.RogueBench.OUTCOME_NS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.credit.CreditFlowControl;
import io.jsdp.flow.engine.Blocking;
import io.jsdp.flow.engine.FfdcContent;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.wire.Bsdh;
import io.jsdp.flow.wire.Hello;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 5, acceptance 3, the rogue-peer half: for every {@link Violation} a raw-verbs peer breaks the
 * protocol on purpose — as the active side (the engine accepted it) and, where the violation exists
 * there, as the passive side (the engine connected to it). Each time the engine's connection must end
 * FAILED with {@code PROTOCOL_VIOLATION} and an FFDC record {@code protocol.NAME} naming it, the rogue
 * must see the abort, nothing may hang past {@link RogueBench#OUTCOME_NS}, no engine thread may catch
 * an exception — and a healthy connection of the same stack keeps streaming, every byte checked,
 * during and after.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoguePeerViolationTest {
    /** Engine connections with eight 4 KiB receive buffers, so credits run out after a few messages. */
    static final SdpOptions ENGINE = new SdpOptions().bufferBytes(4096).receiveBuffers(8).sendBuffers(4);

    /**
     * The scheme the engine asks for (the rogue asks for none, so the attacked connections count
     * credits while the bench's healthy connection uses the scheme); subclasses run every case again
     * for the other schemes (issue 8, acceptance 1).
     *
     * @return credit-based here
     */
    FlowControlScheme scheme() {
        return FlowControlScheme.CREDIT;
    }

    private RogueBench bench() throws Exception {
        return new RogueBench(ENGINE.copy().flowControl(scheme()), true);
    }

    /** A message with only a BSDH (any fields), {@code total} bytes long (the rest zero). */
    static ByteBuffer bsdh(int mid, int bufs, long len, int mseq, int ack, int total) {
        ByteBuffer b = ByteBuffer.allocate(total).order(ByteOrder.BIG_ENDIAN);
        new Bsdh().wrap(b, 0).put(mid, 0, bufs, (int) len, mseq, ack);
        return b;
    }

    /** The engine aborted the attacked connection with {@code v}, FFDC record complete; the rogue saw it; the rest is untouched. */
    private static void expectAbort(RogueBench b, Attack a, Violation v) throws InterruptedException {
        // issue 10, acceptance 1: the record holds the whole snapshot
        FfdcContent.assertComplete(RogueBench.assertViolation(a.engine(), v), "protocol." + v.name(), a.engine());
        assertTrue(a.rogue().awaitAbort(OUTCOME_NS), "the rogue saw no abort: " + a.rogue().describeEnd());
        assertTrue(a.engine().awaitReleased(OUTCOME_NS), "the aborted connection is released");
        b.assertHealthyStillStreams();
        b.assertNoHandlerFailures();
    }

    /** The engine's passive side dropped the handshake with {@code v} (it never reached accept). */
    private static void expectHandshakeAbort(RogueBench b, Attack a, Violation v) throws InterruptedException {
        b.assertHandshakeViolation(a.rogue(), v, 1);
        assertTrue(a.rogue().awaitAbort(OUTCOME_NS), "the rogue saw no abort: " + a.rogue().describeEnd());
        b.assertHealthyStillStreams();
        b.assertNoHandlerFailures();
    }

    // ------------------------------------------------------------------ SHORT_MESSAGE

    @Test
    void abortsConnectionOnShortMessageAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            a.raw(ByteBuffer.allocate(Bsdh.LENGTH - 1));
            expectAbort(b, a, Violation.SHORT_MESSAGE);
        }
    }

    @Test
    void abortsConnectionOnEmptySendInsteadOfHelloAckAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passiveBeforeHelloAck(b)) {
            a.raw(ByteBuffer.allocate(0));
            expectAbort(b, a, Violation.SHORT_MESSAGE);
        }
    }

    @Test
    void abortsHandshakeOnShortMessageInsteadOfHelloAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.activeBeforeHello(b)) {
            a.raw(ByteBuffer.allocate(4));
            expectHandshakeAbort(b, a, Violation.SHORT_MESSAGE);
        }
    }

    // ------------------------------------------------------------------ LENGTH_MISMATCH

    @Test
    void abortsConnectionOnLengthLongerThanReceivedAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            ByteBuffer m = a.rogue().data(new byte[50]);
            m.putInt(Bsdh.LEN_OFFSET, 100);
            a.raw(m);
            expectAbort(b, a, Violation.LENGTH_MISMATCH);
        }
    }

    @Test
    void abortsConnectionOnLengthShorterThanReceivedAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            ByteBuffer m = a.rogue().data(new byte[50]);
            m.putInt(Bsdh.LEN_OFFSET, Bsdh.LENGTH + 10);
            a.raw(m);
            expectAbort(b, a, Violation.LENGTH_MISMATCH);
        }
    }

    @Test
    void abortsHandshakeOnHelloWhoseLengthDisagreesAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.activeBeforeHello(b)) {
            ByteBuffer h = a.rogue().hello();
            h.putInt(Bsdh.LEN_OFFSET, Hello.LENGTH + 4);
            a.raw(h);
            expectHandshakeAbort(b, a, Violation.LENGTH_MISMATCH);
        }
    }

    // ------------------------------------------------------------------ UNKNOWN_MID

    @Test
    void abortsConnectionOnUnknownMidAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            ByteBuffer m = a.rogue().creditUpdate();
            m.put(Bsdh.MID_OFFSET, (byte) 0x42);
            a.raw(m);
            expectAbort(b, a, Violation.UNKNOWN_MID);
        }
    }

    @Test
    void abortsConnectionOnUnknownMidInsteadOfHelloAckAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passiveBeforeHelloAck(b)) {
            a.raw(bsdh(0x80, 8, Bsdh.LENGTH, 0, 0, Bsdh.LENGTH));
            expectAbort(b, a, Violation.UNKNOWN_MID);
        }
    }

    // ------------------------------------------------------------------ UNSUPPORTED_MID

    @Test
    void abortsConnectionOnEveryUnsupportedMidAndRecordsFfdc() throws Exception {
        int[] unsupported = {MessageId.SEND_SM, MessageId.RDMA_WR_COMPL, MessageId.RDMA_RD_COMPL, MessageId.MODE_CHANGE,
            MessageId.SRC_AVAIL_CANCEL, MessageId.SINK_AVAIL_CANCEL, MessageId.SINK_CANCEL_ACK, MessageId.CH_RCV_BUF,
            MessageId.CH_RCV_BUF_ACK, MessageId.SUSP_COMM, MessageId.SUSP_COMM_ACK, MessageId.SINK_AVAIL, MessageId.SRC_AVAIL};
        try (RogueBench b = bench()) {
            for (int i = 0; i < unsupported.length; i++) {
                // both sides, alternating; each carries a 16-byte extended header's worth of bytes
                try (Attack a = i % 2 == 0 ? Attack.active(b) : Attack.passive(b)) {
                    a.raw(a.rogue().frame(unsupported[i], new byte[16]));
                    expectAbort(b, a, Violation.UNSUPPORTED_MID);
                }
            }
        }
    }

    // ------------------------------------------------------------------ DATA_BEFORE_HELLO

    @Test
    void abortsHandshakeOnDataBeforeHelloAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.activeBeforeHello(b)) {
            a.raw(a.rogue().data("too early".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
            expectHandshakeAbort(b, a, Violation.DATA_BEFORE_HELLO);
        }
    }

    @Test
    void abortsConnectionOnDataInsteadOfHelloAckAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passiveBeforeHelloAck(b)) {
            a.raw(bsdh(MessageId.DATA, 8, Bsdh.LENGTH + 5, 1, 0, Bsdh.LENGTH + 5));
            expectAbort(b, a, Violation.DATA_BEFORE_HELLO);
        }
    }

    @Test
    void abortsConnectionOnDisConnInsteadOfHelloAckAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passiveBeforeHelloAck(b)) {
            a.raw(bsdh(MessageId.DISCONN, 8, Bsdh.LENGTH, 1, 0, Bsdh.LENGTH));
            expectAbort(b, a, Violation.DATA_BEFORE_HELLO);
        }
    }

    // ------------------------------------------------------------------ SECOND_HELLO

    @Test
    void abortsConnectionOnSecondHelloAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            a.raw(a.rogue().hello());
            expectAbort(b, a, Violation.SECOND_HELLO);
        }
    }

    @Test
    void abortsConnectionOnSecondHelloAckAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            a.raw(a.rogue().helloAck());
            expectAbort(b, a, Violation.SECOND_HELLO);
        }
    }

    @Test
    void abortsHandshakeOnHelloAckSentToThePassiveSideAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.activeBeforeHello(b)) {
            a.raw(a.rogue().helloAck());
            expectHandshakeAbort(b, a, Violation.SECOND_HELLO);
        }
    }

    @Test
    void abortsConnectionOnHelloSentToTheActiveSideAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passiveBeforeHelloAck(b)) {
            a.raw(a.rogue().hello());
            expectAbort(b, a, Violation.SECOND_HELLO);
        }
    }

    // ------------------------------------------------------------------ BAD_HELLO

    /** Hello mutations the passive side must refuse (C.3, C.12: bad version, max_adverts 0, sizes). */
    static Map<String, Consumer<ByteBuffer>> badHellos() {
        Map<String, Consumer<ByteBuffer>> m = new LinkedHashMap<>();
        m.put("version 2.2", h -> h.put(Hello.VERSION_OFFSET, (byte) 0x22));
        m.put("version 0.0", h -> h.put(Hello.VERSION_OFFSET, (byte) 0x00));
        m.put("max_adverts 0", h -> h.put(Hello.MAX_ADVERTS_OFFSET, (byte) 0));
        m.put("localrcvsz below the minimum", h -> h.putInt(Hello.LOCAL_RCVSZ_OFFSET, SdpOptions.BUFFER_BYTES_MIN - 1));
        m.put("localrcvsz above the maximum", h -> h.putInt(Hello.LOCAL_RCVSZ_OFFSET, SdpOptions.BUFFER_BYTES_MAX + 1));
        m.put("localrcvsz 0", h -> h.putInt(Hello.LOCAL_RCVSZ_OFFSET, 0));
        m.put("localrcvsz 2^32-1", h -> h.putInt(Hello.LOCAL_RCVSZ_OFFSET, -1));
        m.put("bufs 0", h -> h.putShort(Bsdh.BUFS_OFFSET, (short) 0));
        m.put("bufs above the maximum", h -> h.putShort(Bsdh.BUFS_OFFSET, (short) (CreditFlowControl.MAX_BUFS + 1)));
        return m;
    }

    /** HelloAck mutations the active side must refuse (C.4). */
    static Map<String, Consumer<ByteBuffer>> badHelloAcks() {
        Map<String, Consumer<ByteBuffer>> m = new LinkedHashMap<>();
        m.put("version 2.2", h -> h.put(HelloAck.VERSION_OFFSET, (byte) 0x22));
        m.put("ext_max_adverts 0", h -> h.put(HelloAck.MAX_ADVERTS_OFFSET, (byte) 0));
        m.put("actrcvsz below the minimum", h -> h.putInt(HelloAck.ACTUAL_RCVSZ_OFFSET, SdpOptions.BUFFER_BYTES_MIN - 1));
        m.put("actrcvsz above the maximum", h -> h.putInt(HelloAck.ACTUAL_RCVSZ_OFFSET, SdpOptions.BUFFER_BYTES_MAX + 1));
        m.put("bufs above the maximum", h -> h.putShort(Bsdh.BUFS_OFFSET, (short) 0xFFFF));
        return m;
    }

    @Test
    void abortsHandshakeOnBadHelloFieldsAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench()) {
            for (Map.Entry<String, Consumer<ByteBuffer>> e : badHellos().entrySet()) {
                try (Attack a = Attack.activeBeforeHello(b)) {
                    ByteBuffer h = a.rogue().hello();
                    e.getValue().accept(h);
                    a.raw(h);
                    expectHandshakeAbort(b, a, Violation.BAD_HELLO);
                } catch (AssertionError ae) {
                    throw new AssertionError("Hello with " + e.getKey() + ": " + ae.getMessage(), ae);
                }
            }
            try (Attack a = Attack.activeBeforeHello(b)) {
                ByteBuffer h = a.rogue().hello().limit(Hello.LENGTH - 28);
                h.putInt(Bsdh.LEN_OFFSET, Hello.LENGTH - 28); // consistent, but too short for the header
                a.raw(h);
                expectHandshakeAbort(b, a, Violation.BAD_HELLO);
            }
        }
    }

    @Test
    void abortsConnectionOnBadHelloAckFieldsAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench()) {
            for (Map.Entry<String, Consumer<ByteBuffer>> e : badHelloAcks().entrySet()) {
                try (Attack a = Attack.passiveBeforeHelloAck(b)) {
                    ByteBuffer h = a.rogue().helloAck();
                    e.getValue().accept(h);
                    a.raw(h);
                    expectAbort(b, a, Violation.BAD_HELLO);
                } catch (AssertionError ae) {
                    throw new AssertionError("HelloAck with " + e.getKey() + ": " + ae.getMessage(), ae);
                }
            }
            try (Attack a = Attack.passiveBeforeHelloAck(b)) {
                ByteBuffer h = a.rogue().helloAck().limit(Hello.LENGTH);
                h.putInt(Bsdh.LEN_OFFSET, Hello.LENGTH);
                a.raw(h);
                expectAbort(b, a, Violation.BAD_HELLO);
            }
        }
    }

    // ------------------------------------------------------------------ MSEQ_OUT_OF_ORDER

    @Test
    void abortsConnectionOnMseqOutOfOrderAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            ByteBuffer skip = a.rogue().data(new byte[] {1, 2, 3});
            skip.putInt(Bsdh.MSEQ_OFFSET, a.rogue().nextMseq() + 1);
            a.raw(skip);
            expectAbort(b, a, Violation.MSEQ_OUT_OF_ORDER);
        }
    }

    @Test
    void abortsConnectionOnReplayedMseqAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            ByteBuffer first = a.rogue().data(new byte[] {7});
            a.rogue().sendValid(first);
            a.raw(first.duplicate()); // the same message again: mseq repeats
            expectAbort(b, a, Violation.MSEQ_OUT_OF_ORDER);
        }
    }

    // ------------------------------------------------------------------ ACK_OUT_OF_RANGE

    @Test
    void abortsConnectionOnAckOfAMessageNeverSentAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            ByteBuffer m = a.rogue().creditUpdate();
            m.putInt(Bsdh.MSEQ_ACK_OFFSET, 5); // the engine sent only its HelloAck, mseq 0
            a.raw(m);
            expectAbort(b, a, Violation.ACK_OUT_OF_RANGE);
        }
    }

    @Test
    void abortsConnectionOnAckGoingBackwardsAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            // two engine Data messages (mseq 1 and 2), the rogue acknowledges 2, then 1
            for (int i = 0; i < 2; i++) {
                Blocking.writeFully(a.engine(), ByteBuffer.wrap(new byte[] {(byte) i}));
                RoguePeer.Message m = a.rogue().receiveSkippingCreditUpdates(OUTCOME_NS);
                assertNotNull(m, "the engine's data");
                assertArrayEquals(new byte[] {(byte) i}, m.payload());
            }
            assertEquals(2, a.rogue().lastReceivedMseq());
            a.rogue().sendValid(a.rogue().creditUpdate());
            ByteBuffer back = a.rogue().creditUpdate();
            back.putInt(Bsdh.MSEQ_ACK_OFFSET, 1);
            a.raw(back);
            expectAbort(b, a, Violation.ACK_OUT_OF_RANGE);
        }
    }

    // ------------------------------------------------------------------ BUFS_OUT_OF_RANGE

    @Test
    void abortsConnectionOnBufsOutOfRangeAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            ByteBuffer m = a.rogue().creditUpdate();
            m.putShort(Bsdh.BUFS_OFFSET, (short) (CreditFlowControl.MAX_BUFS + 1));
            a.raw(m);
            expectAbort(b, a, Violation.BUFS_OUT_OF_RANGE);
        }
    }

    @Test
    void abortsConnectionOnMaximalBufsAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            ByteBuffer m = a.rogue().data(new byte[] {1});
            m.putShort(Bsdh.BUFS_OFFSET, (short) 0xFFFF);
            a.raw(m);
            expectAbort(b, a, Violation.BUFS_OUT_OF_RANGE);
        }
    }

    // ------------------------------------------------------------------ NO_CREDIT

    @Test
    void abortsConnectionOnDataWithOnlyTheReservedCreditAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            RoguePeer r = a.rogue();
            // the engine's application reads nothing: every Data keeps a buffer
            while (r.credits() >= 2) {
                assertEquals(io.jsdp.verbs.WcStatus.SUCCESS, r.sendValid(r.data(new byte[] {9})));
            }
            assertEquals(1, r.credits());
            a.raw(r.data(new byte[] {10})); // data needs two credits: the last is for credit updates
            expectAbort(b, a, Violation.NO_CREDIT);
        }
    }

    @Test
    void abortsConnectionOnCreditUpdateWithoutAnyCreditAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            RoguePeer r = a.rogue();
            // The rogue keeps acknowledging the engine's Hello only, so the credits it is owed never come
            // back, while the engine's application reads everything, so its buffers are all posted
            // again: a message without credit arrives in a posted buffer (no RNR) and must be refused.
            int sent = 0;
            while (r.creditsAcking(0) >= 2) {
                ByteBuffer m = r.data(new byte[] {(byte) sent});
                m.putInt(Bsdh.MSEQ_ACK_OFFSET, 0);
                r.sendValid(m);
                sent++;
            }
            ByteBuffer got = ByteBuffer.allocate(sent);
            Blocking.readFully(a.engine(), got);
            while (r.creditsAcking(0) >= 1) {
                ByteBuffer m = r.creditUpdate();
                m.putInt(Bsdh.MSEQ_ACK_OFFSET, 0);
                r.sendValid(m);
            }
            assertEquals(0, r.creditsAcking(0));
            ByteBuffer m = r.creditUpdate();
            m.putInt(Bsdh.MSEQ_ACK_OFFSET, 0);
            a.raw(m);
            expectAbort(b, a, Violation.NO_CREDIT);
        }
    }

    // ------------------------------------------------------------------ DATA_AFTER_DISCONN

    @Test
    void abortsConnectionOnDataAfterDisConnAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            a.rogue().sendValid(a.rogue().disconn());
            a.rogue().sendValid(a.rogue().creditUpdate()); // credit updates stay valid after DisConn (C.6)
            a.raw(a.rogue().data(new byte[] {1, 2}));
            expectAbort(b, a, Violation.DATA_AFTER_DISCONN);
        }
    }

    @Test
    void abortsConnectionOnSecondDisConnAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            a.rogue().sendValid(a.rogue().disconn());
            a.raw(a.rogue().disconn());
            expectAbort(b, a, Violation.DATA_AFTER_DISCONN);
        }
    }

    // ------------------------------------------------------------------ PAYLOAD_ON_CONTROL

    @Test
    void abortsConnectionOnDisConnWithPayloadAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.active(b)) {
            a.raw(a.rogue().frame(MessageId.DISCONN, new byte[] {1, 2, 3}));
            expectAbort(b, a, Violation.PAYLOAD_ON_CONTROL);
        }
    }

    @Test
    void abortsConnectionOnAbortConnWithPayloadAndRecordsFfdc() throws Exception {
        try (RogueBench b = bench(); Attack a = Attack.passive(b)) {
            a.raw(a.rogue().frame(MessageId.ABORT_CONN, new byte[] {9}));
            expectAbort(b, a, Violation.PAYLOAD_ON_CONTROL);
        }
    }
}
