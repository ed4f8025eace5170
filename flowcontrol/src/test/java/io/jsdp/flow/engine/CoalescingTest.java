package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Small writes are coalesced while a message is in flight (Nagle's rule, the send completion standing
 * in for the ACK) unless TCP_NODELAY is set; large writes are cut at the peer's buffer size. Sends are
 * slowed with the device's operation delay so "in flight" lasts.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CoalescingTest {
    private static final int WRITES = 200;

    private static long dataMessages(boolean noDelay) throws Exception {
        // B can hold every write as a message of its own, so credits never force coalescing
        SdpOptions roomy = new SdpOptions().bufferBytes(4096).receiveBuffers(WRITES + 8);
        try (SdpPair p = SdpPair.open(new SdpOptions().noDelay(noDelay), roomy)) {
            p.deviceA.faults().operationDelayNs(TimeUnit.MICROSECONDS.toNanos(200));
            long before = p.a.stats().messagesSent();
            for (int i = 0; i < WRITES; i++) {
                Blocking.writeFully(p.a, ByteBuffer.wrap(new byte[] {(byte) i, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
            }
            p.a.shutdownOutput();
            ByteBuffer all = ByteBuffer.allocate(WRITES * 10);
            Blocking.readFully(p.b, all);
            for (int i = 0; i < WRITES; i++) {
                assertEquals((byte) i, all.get(i * 10), "byte order kept");
            }
            assertEquals(SdpConnection.EOF, Blocking.read(p.b, ByteBuffer.allocate(1)));
            p.deviceA.faults().clear();
            // every message but the DisConn (no credit updates: A never ran short)
            return p.a.stats().messagesSent() - before - 1;
        }
    }

    @Test
    void smallWritesAreCoalescedWhileAMessageIsInFlight() throws Exception {
        long messages = dataMessages(false);
        assertTrue(messages < WRITES / 4, WRITES + " writes went as " + messages + " messages");
    }

    @Test
    void noDelaySendsEverySmallWriteAtOnce() throws Exception {
        assertEquals(WRITES, dataMessages(true));
    }

    @Test
    void aLargeWriteIsCutAtThePeersBufferSize() throws Exception {
        try (SdpPair p = SdpPair.open(new SdpOptions().bufferBytes(65_536), new SdpOptions().bufferBytes(4096))) {
            Blocking.writeFully(p.a, ByteBuffer.allocate(10 * 4080));
            p.a.shutdownOutput();
            Blocking.readFully(p.b, ByteBuffer.allocate(10 * 4080));
            // the DisConn has arrived when a read says EOF (before that it may still be on its way)
            assertEquals(SdpConnection.EOF, Blocking.read(p.b, ByteBuffer.allocate(1)));
            assertEquals(10 * 4080, p.b.stats().bytesReceived());
            assertTrue(p.b.stats().messagesReceived() >= 10 + 2, "Hello, ten 4080-byte messages, DisConn: "
                + p.b.stats());
        }
    }
}
