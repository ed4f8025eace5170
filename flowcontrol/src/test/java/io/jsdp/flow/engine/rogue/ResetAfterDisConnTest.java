package io.jsdp.flow.engine.rogue;

import static io.jsdp.flow.engine.rogue.RogueBench.OUTCOME_NS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.Blocking;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.WcStatus;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A peer that sent its DisConn and then resets the connection — an AbortConn, or a disconnect without
 * waiting for our DisConn (what an exiting peer's connection manager does on hardware once its process
 * is gone) — ended its stream first: as Linux TCP after a FIN then a RST, reads give the data that
 * arrived and then EOF, and writes fail with the reset ({@code docs/protocol.md} section 7).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ResetAfterDisConnTest {

    @ParameterizedTest(name = "{0} bytes unread, then {1}")
    @CsvSource({"100, AbortConn", "0, AbortConn", "100, disconnect", "0, disconnect"})
    void aResetAfterThePeersDisConnEndsTheStreamWithEof(int unread, String reset) throws Exception {
        try (RogueBench b = new RogueBench(RoguePeerViolationTest.ENGINE.copy(), false); Attack a = Attack.active(b)) {
            RoguePeer r = a.rogue();
            SdpConnection engine = a.engine();
            byte[] data = new byte[unread];
            for (int i = 0; i < unread; i++) {
                data[i] = (byte) (i * 7 + 1);
            }
            if (unread > 0) {
                assertEquals(WcStatus.SUCCESS, r.sendValid(r.data(data)));
            }
            assertEquals(WcStatus.SUCCESS, r.sendValid(r.disconn()));
            if (reset.equals("AbortConn")) {
                assertEquals(WcStatus.SUCCESS, r.sendValid(r.frame(MessageId.ABORT_CONN, new byte[0])));
            } else {
                r.close(); // a disconnect without waiting for our DisConn
            }
            long deadline = System.nanoTime() + OUTCOME_NS;
            while (engine.state() == SdpConnection.State.ESTABLISHED && System.nanoTime() - deadline < 0) {
                engine.await(SdpConnection.OP_READ, TimeUnit.MILLISECONDS.toNanos(10));
            }
            assertTrue(engine.state() != SdpConnection.State.ESTABLISHED, "the reset was not seen: " + engine.snapshot());
            if (unread > 0) {
                ByteBuffer got = ByteBuffer.allocate(unread);
                Blocking.readFully(engine, got);
                assertArrayEquals(data, got.array(), "the data that arrived before the DisConn");
            }
            assertEquals(SdpConnection.EOF, engine.read(ByteBuffer.allocate(10)), "EOF after the data: " + engine.failureDetail());
            assertEquals(SdpConnection.EOF, engine.read(ByteBuffer.allocate(10)), "EOF stays");
            assertEquals(SdpConnection.FAILED, engine.write(ByteBuffer.wrap(new byte[10])), "writes fail with the reset");
            engine.close();
        }
    }
}
