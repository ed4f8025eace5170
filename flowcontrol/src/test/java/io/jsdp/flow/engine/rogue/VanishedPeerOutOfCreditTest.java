package io.jsdp.flow.engine.rogue;

import static io.jsdp.flow.engine.rogue.RogueBench.OUTCOME_NS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.engine.Blocking;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.WcStatus;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer that vanishes while out of credit may have died with data in its send slots, so its end is a
 * reset after the data that arrived ({@code docs/protocol.md} section 7) — also when this side, reading,
 * granted it credits since: the peer may never have seen the grant (or what the grant let it send died
 * with it). Out of credit is judged by what the peer's latest message left it, not by what we advertised
 * after (the CI failure of {@code PeerExitTwoJvmTest}'s halt case: the credit update that told the dead
 * peer of the freed buffers made it look idle, and its cut stream read as EOF).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VanishedPeerOutOfCreditTest {

    @Test
    void aPeerThatVanishesOutOfCreditResetsAfterTheDataEvenWhenGrantedCreditsSince() throws Exception {
        try (RogueBench b = new RogueBench(RoguePeerViolationTest.ENGINE.copy(), false); Attack a = Attack.active(b)) {
            RoguePeer r = a.rogue();
            SdpConnection engine = a.engine();
            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            for (int i = 0; r.credits() >= 2; i++) { // the engine reads nothing yet: the rogue runs out of credit
                byte[] p = new byte[1000];
                java.util.Arrays.fill(p, (byte) (i + 1));
                assertEquals(WcStatus.SUCCESS, r.sendValid(r.data(p)));
                sent.write(p);
            }
            try {
                b.deviceR.faults().linkDown(true); // the rogue's process is gone: it takes and answers nothing
                byte[] all = sent.toByteArray();
                ByteBuffer got = ByteBuffer.allocate(all.length);
                Blocking.readFully(engine, got); // reading frees buffers: a credit update goes to the starving peer
                assertArrayEquals(all, got.array(), "the data that arrived");
                // the update is never answered: the transport gives up, and the engine learns the peer is gone
                assertEquals(SdpConnection.OP_ENDED, engine.await(SdpConnection.OP_ENDED, OUTCOME_NS * 4), engine::snapshot);
                assertEquals(SdpConnection.FAILED, engine.read(ByteBuffer.allocate(10)),
                    "a reset, not EOF: the peer may have held data (" + engine.failureDetail() + ")");
                assertEquals("Connection reset", engine.failure().tcpMessage(), engine.failureDetail());
                assertEquals(SdpConnection.FAILED, engine.write(ByteBuffer.wrap(new byte[10])), "writes fail too");
            } finally {
                b.deviceR.faults().clear();
            }
        }
    }

    @Test
    void aPacketizedPeerThatVanishesWithTheRingFullResetsAfterTheDataEvenWhenToldOfSpaceSince() throws Exception {
        int packetized = FlowControlScheme.PACKETIZED.capabilityBit();
        int rogueRing = 64 * 1024;
        try (RogueBench b = new RogueBench(RoguePeerViolationTest.ENGINE.copy().flowControl(FlowControlScheme.PACKETIZED), false);
             RoguePeer r = RoguePeer.connect(b.pdR, b.listenerE.localAddress(), new RoguePeer.Options().ringBytes(rogueRing))) {
            assertEquals(WcStatus.SUCCESS, r.sendValid(r.hello(packetized, r.ringRkey(), rogueRing)));
            RoguePeer.Message ack = r.receive(OUTCOME_NS);
            assertEquals(MessageId.HELLO_ACK, ack.mid(), ack::toString);
            HelloAck h = new HelloAck().wrap(ByteBuffer.wrap(ack.bytes()).order(ByteOrder.BIG_ENDIAN), 0);
            SdpConnection engine = b.acceptEngine();
            assertEquals(FlowControlScheme.PACKETIZED, engine.flowControlScheme());
            byte[] all = new byte[(int) h.ringBytes()]; // the whole ring: the rogue has no room left
            for (int i = 0; i < all.length; i++) {
                all[i] = (byte) (i * 13 + 5);
            }
            assertEquals(WcStatus.SUCCESS, r.rdmaWrite(h.ringAddress(), h.ringRkey(), all));
            assertEquals(WcStatus.SUCCESS, r.sendValid(r.ringData(0, all.length, 0)));
            try {
                b.deviceR.faults().linkDown(true); // gone, as far as the engine can tell
                ByteBuffer got = ByteBuffer.allocate(all.length);
                Blocking.readFully(engine, got); // reading frees the ring: a RingAck goes to the rogue
                assertArrayEquals(all, got.array(), "the data that arrived");
                assertEquals(SdpConnection.OP_ENDED, engine.await(SdpConnection.OP_ENDED, OUTCOME_NS * 4), engine::snapshot);
                assertEquals(SdpConnection.FAILED, engine.read(ByteBuffer.allocate(10)),
                    "a reset, not EOF: the peer may have held data for ring space (" + engine.failureDetail() + ")");
            } finally {
                b.deviceR.faults().clear();
            }
        }
    }
}
