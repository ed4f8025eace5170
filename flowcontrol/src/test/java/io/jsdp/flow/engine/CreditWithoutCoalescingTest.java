package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Credit-based flow control without coalescing ({@code jsdp.credit.coalesce=false}), seed 001 §4.1.1's
 * scheme: every write is a message of its own, and a write takes nothing while an earlier message
 * waits for credits. The same writes with coalescing (the default) are the contrast.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CreditWithoutCoalescingTest {
    private static final int WRITE = 100;

    /**
     * Writes {@code WRITE}-byte pieces without blocking until one is not taken whole: how many were, and
     * what is left of the next (null when all {@code max} were taken).
     */
    private static Taken writeUntilRefused(SdpConnection c, int max) {
        for (int i = 0; i < max; i++) {
            ByteBuffer b = piece(i);
            int n = c.write(b);
            assertTrue(n >= 0, "write: " + n);
            if (n < WRITE) {
                return new Taken(i, b); // with coalescing the last slot may take part of a piece
            }
        }
        return new Taken(max, null);
    }

    private record Taken(int pieces, ByteBuffer rest) {
    }

    private static ByteBuffer piece(int i) {
        ByteBuffer b = ByteBuffer.allocate(WRITE);
        while (b.hasRemaining()) {
            b.put((byte) (i + b.position()));
        }
        return b.flip();
    }

    private record Outcome(int takenWhileReaderStopped, long dataMessages) {
    }

    /**
     * A writes {@code writes} pieces to B, which does not read until A is refused once, then reads them
     * all; Nagle's rule is on (no TCP_NODELAY), so only the option decides whether writes coalesce.
     */
    private static Outcome run(boolean coalesce, int writes) throws Exception {
        SdpOptions a = new SdpOptions().creditCoalesce(coalesce).sendBuffers(8);
        SdpOptions b = new SdpOptions().bufferBytes(4096).receiveBuffers(4);
        try (SdpPair p = SdpPair.open(a, b)) {
            assertEquals(FlowControlScheme.CREDIT, p.a.flowControlScheme());
            long before = p.a.stats().messagesSent();
            Taken taken = writeUntilRefused(p.a, writes);
            if (!coalesce) {
                assertTrue(taken.rest() != null && taken.rest().remaining() == WRITE,
                    "a message per write: a write is taken whole or not at all");
                assertEquals(0, p.a.readyOps() & SdpConnection.OP_WRITE,
                    "not writable while a message waits for credits: " + p.a.snapshot());
            }
            ByteBuffer all = ByteBuffer.allocate(writes * WRITE);
            Thread writer = new Thread(() -> {
                try {
                    if (taken.rest() != null) {
                        Blocking.writeFully(p.a, taken.rest());
                    }
                    for (int i = taken.pieces() + 1; i < writes; i++) {
                        Blocking.writeFully(p.a, piece(i)); // B reads now, so these go as credits return
                    }
                    p.a.shutdownOutput();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "writer");
            writer.start();
            Blocking.readFully(p.b, all);
            writer.join(TimeUnit.SECONDS.toMillis(60));
            for (int i = 0; i < writes; i++) {
                for (int j = 0; j < WRITE; j++) {
                    assertEquals((byte) (i + j), all.get(i * WRITE + j), "byte " + j + " of write " + i);
                }
            }
            assertEquals(SdpConnection.EOF, Blocking.read(p.b, ByteBuffer.allocate(1)));
            // every message but the DisConn: A receives no data, so it never owes B a credit update
            return new Outcome(taken.pieces(), p.a.stats().messagesSent() - before - 1);
        }
    }

    @Test
    void everyWriteIsItsOwnMessageAndWaitsWhileAnEarlierOneWaitsForCredits() throws Exception {
        Outcome o = run(false, 300);
        assertEquals(300, o.dataMessages(), "one message per write");
        // B's four buffers give A three data messages (two credits each, the last one reserved), the
        // fourth write waits in a send slot for credits, and the fifth is refused
        assertEquals(4, o.takenWhileReaderStopped(), "writes taken while the reader did not read");
    }

    @Test
    void withCoalescingTheSameWritesFillTheSendSlotsAndGoAsFewerMessages() throws Exception {
        Outcome o = run(true, 300);
        assertTrue(o.takenWhileReaderStopped() > 100, "slots take writes while credits are out: " + o);
        assertTrue(o.dataMessages() < 100, "300 writes coalesced: " + o);
    }

    @Test
    void randomWritesArriveIntactWithoutCoalescingOnTwoDataCredits() throws Exception {
        SdpOptions tiny = new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(2).creditCoalesce(false);
        StreamIntegrityTest.run(tiny, tiny.copy(), StreamIntegrityTest.GIB / 16, 5);
    }
}
