package io.jsdp.flow.engine.rogue;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.wire.MessageId;
import java.nio.ByteBuffer;

/**
 * A rogue and the engine connection it talks to, with the handshake done or not. Closing it closes
 * the rogue (the engine connection ends by itself or with its stack).
 *
 * @param rogue the rogue peer
 * @param engine the engine's connection, or null when the engine's passive side never queued it
 * @param listener the rogue's listener when the rogue is passive, else null
 */
record Attack(RoguePeer rogue, SdpConnection engine, RogueListener listener) implements AutoCloseable {

    /** The rogue connects to the engine's listener; no Hello sent yet, so there is no engine connection to see. */
    static Attack activeBeforeHello(RogueBench b) throws Exception {
        return new Attack(RoguePeer.connect(b.pdR, b.listenerE.localAddress(), new RoguePeer.Options()), null, null);
    }

    /** The rogue connects, sends a valid Hello, reads the HelloAck; the engine's connection is accepted. */
    static Attack active(RogueBench b) throws Exception {
        RoguePeer r = RoguePeer.connect(b.pdR, b.listenerE.localAddress(), new RoguePeer.Options());
        try {
            r.sendValid(r.hello());
            RoguePeer.Message ack = r.receive(RogueBench.OUTCOME_NS);
            if (ack == null || ack.mid() != MessageId.HELLO_ACK) {
                throw new AssertionError("expected a HelloAck, got " + ack);
            }
            return new Attack(r, b.acceptEngine(), null);
        } catch (Exception | AssertionError e) {
            r.close();
            throw e;
        }
    }

    /** The engine connects to a rogue listener; the rogue accepts and has read the engine's Hello, not answered. */
    static Attack passiveBeforeHelloAck(RogueBench b) throws Exception {
        RogueListener l = new RogueListener(b.pdR);
        SdpConnection c = null;
        RoguePeer r = null;
        try {
            c = b.stackE.connect(l.address(), b.engineOptions);
            r = l.accept(new RoguePeer.Options());
            RoguePeer.Message hello = r.receive(RogueBench.OUTCOME_NS);
            if (hello == null || hello.mid() != MessageId.HELLO) {
                throw new AssertionError("expected the engine's Hello, got " + hello);
            }
            return new Attack(r, c, l);
        } catch (Exception | AssertionError e) {
            if (r != null) {
                r.close();
            }
            if (c != null) {
                c.abort();
            }
            l.close();
            throw e;
        }
    }

    /** As {@link #passiveBeforeHelloAck}, then the rogue answers with a valid HelloAck and the engine is established. */
    static Attack passive(RogueBench b) throws Exception {
        Attack a = passiveBeforeHelloAck(b);
        try {
            a.rogue.sendValid(a.rogue.helloAck());
            if (!a.engine.awaitConnected(RogueBench.OUTCOME_NS)) {
                throw new AssertionError("the engine did not take a valid HelloAck: " + a.engine.failureDetail());
            }
            return a;
        } catch (Exception | AssertionError e) {
            a.close();
            throw e;
        }
    }

    /** Sends exactly these bytes. */
    void raw(ByteBuffer bytes) {
        rogue.sendRaw(bytes);
    }

    @Override
    public void close() {
        rogue.close();
        if (listener != null) {
            listener.close();
        }
    }
}
