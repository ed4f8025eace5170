package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The SinkAvail books on both sides: the peer-input checks, and a randomized model of the exchange
 * (two in-order channels, random interleavings of advertising, sending, writing and cancelling) that
 * checks the buffer guarantee and stream order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SinkAvailBooksTest {

    @Test
    void writeCompletionChecks() {
        SinkAvailSender sink = new SinkAvailSender();
        assertEquals(SinkAvailSender.NOT_OUTSTANDING, sink.onWriteCompletion(10), "no advertisement outstanding");
        assertEquals(0, sink.advertise(100));
        assertFalse(sink.bufferFree());
        assertEquals(SinkAvailSender.OVERRUN, sink.onWriteCompletion(101));
        assertEquals(SinkAvailSender.OVERRUN, sink.onWriteCompletion(0));
        assertEquals(100, sink.onWriteCompletion(100));
        assertTrue(sink.bufferFree());
        assertEquals(SinkAvailSender.NOT_OUTSTANDING, sink.onWriteCompletion(1), "retired: a second one is a violation");
        assertEquals(SinkAvailSender.NOT_OUTSTANDING, sink.onCancelAck(), "no cancel was sent");
        assertThrows(IllegalArgumentException.class, () -> sink.advertise(0));
    }

    @Test
    void streamMessageVoidsAndCountsIntoNonDisc() {
        SinkAvailSender sink = new SinkAvailSender();
        assertFalse(sink.onStreamMessage());
        assertEquals(1, sink.advertise(64));
        assertThrows(IllegalStateException.class, () -> sink.advertise(64));
        assertTrue(sink.onStreamMessage());
        assertTrue(sink.bufferFree());
        assertEquals(2, sink.advertise(64));
        assertEquals(1, sink.voided());
    }

    @Test
    void cancelHoldsTheBufferUntilTheAck() {
        SinkAvailSender sink = new SinkAvailSender();
        sink.advertise(64);
        assertTrue(sink.cancel());
        assertFalse(sink.cancel(), "one cancel at a time");
        assertFalse(sink.bufferFree(), "the source may still write until it acknowledges");
        assertEquals(32, sink.onWriteCompletion(32), "a write that crossed the cancel counts");
        assertFalse(sink.bufferFree(), "still waiting for the ack");
        assertEquals(0, sink.onCancelAck());
        assertTrue(sink.bufferFree());
    }

    @Test
    void sourceChecksNonDisc() {
        SinkAvailReceiver src = new SinkAvailReceiver(2);
        assertEquals(SinkAvailReceiver.BAD, src.onSinkAvail(10, 1, 0x1000, 1), "counts a message never sent");
        assertEquals(SinkAvailReceiver.BAD, src.onSinkAvail(0, 1, 0x1000, 0), "size 0");
        assertEquals(SinkAvailReceiver.BAD, src.onSinkAvail(1L << 32, 1, 0x1000, 0), "size beyond u32 range we take");
        src.onStreamMessageSent();
        assertEquals(SinkAvailReceiver.STALE, src.onSinkAvail(10, 1, 0x1000, 0), "crossed our Data");
        assertFalse(src.usable());
        assertEquals(SinkAvailReceiver.ACCEPTED, src.onSinkAvail(10, 7, 0x2000, 1));
        assertEquals(SinkAvailReceiver.ACCEPTED, src.onSinkAvail(20, 8, 0x3000, 1));
        assertEquals(SinkAvailReceiver.TOO_MANY, src.onSinkAvail(30, 9, 0x4000, 1));
        assertTrue(src.usable());
        assertEquals(10, src.headBytes());
        assertEquals(7, src.headRkey());
        assertEquals(0x2000, src.headAddress());
        assertThrows(IllegalStateException.class, () -> src.retireHead(11));
        src.retireHead(10);
        assertEquals(20, src.headBytes());
        src.onStreamMessageSent();
        assertFalse(src.usable(), "sending voids what is pending");
        assertEquals(2, src.stale());
        src.onCancel();
        assertTrue(src.ackDue());
        src.ackSent();
        assertFalse(src.ackDue());
    }

    /** What travels on one direction of the queue pair, in order. */
    private record Msg(char kind, int bytes) {
    }

    @Test
    void randomizedExchangeKeepsTheBufferGuaranteeAndStreamOrder() {
        SplittableRandom rnd = new SplittableRandom(0x5eed_9L);
        long writes = 0;
        long voids = 0;
        for (int run = 0; run < 2_000; run++) {
            SinkAvailSender sink = new SinkAvailSender();
            SinkAvailReceiver src = new SinkAvailReceiver(4);
            ArrayDeque<Msg> toSink = new ArrayDeque<>();
            ArrayDeque<Msg> toSource = new ArrayDeque<>();
            long sentBytes = 0;
            long receivedBytes = 0;
            boolean readerWaiting = false;
            boolean reading = false; // a read owns the advertised buffer
            for (int step = 0; step < 200; step++) {
                switch (rnd.nextInt(7)) {
                    case 0 -> { // a reader blocks with an empty buffer
                        if (!reading && sink.bufferFree()) { // in-flight messages are invisible to it
                            toSource.add(new Msg('A', sink.advertise(100)));
                            reading = true;
                            readerWaiting = true;
                        }
                    }
                    case 1 -> { // the source writes by Data
                        int n = 1 + rnd.nextInt(50);
                        src.onStreamMessageSent();
                        toSink.add(new Msg('D', n));
                        sentBytes += n;
                    }
                    case 2 -> { // the source writes into the sink's buffer
                        if (src.usable()) {
                            int n = 1 + rnd.nextInt(src.headBytes());
                            src.retireHead(n);
                            toSink.add(new Msg('W', n)); // the RDMA WRITE, then its RdmaWrCompl
                            sentBytes += n;
                        }
                    }
                    case 3 -> { // the reader gives up
                        if (readerWaiting && sink.cancel()) {
                            toSource.add(new Msg('C', 0));
                        }
                    }
                    case 4, 5 -> { // deliver to the sink
                        Msg m = toSink.poll();
                        if (m == null) {
                            break;
                        }
                        if (m.kind == 'W') {
                            assertFalse(sink.bufferFree(), "RDMA WRITE into a buffer the sink gave back, run " + run);
                            assertEquals(m.bytes, sink.onWriteCompletion(m.bytes));
                            receivedBytes += m.bytes;
                            writes++;
                        } else if (m.kind == 'D') {
                            if (sink.onStreamMessage()) {
                                voids++;
                            }
                            receivedBytes += m.bytes;
                        } else {
                            assertEquals(0, sink.onCancelAck());
                        }
                        if (sink.bufferFree()) {
                            reading = false;
                            readerWaiting = false;
                        }
                    }
                    default -> { // deliver to the source
                        Msg m = toSource.poll();
                        if (m == null) {
                            break;
                        }
                        if (m.kind == 'A') {
                            int r = src.onSinkAvail(100, 1, 0x1000, m.bytes);
                            assertTrue(r == SinkAvailReceiver.ACCEPTED || r == SinkAvailReceiver.STALE, "status " + r);
                        } else {
                            src.onCancel();
                            src.ackSent();
                            toSink.add(new Msg('K', 0));
                        }
                    }
                }
            }
            while (!toSource.isEmpty() || !toSink.isEmpty()) { // drain
                Msg m = toSource.poll();
                if (m != null) {
                    if (m.kind == 'A') {
                        src.onSinkAvail(100, 1, 0x1000, m.bytes);
                    } else {
                        src.onCancel();
                        src.ackSent();
                        toSink.add(new Msg('K', 0));
                    }
                }
                m = toSink.poll();
                if (m != null) {
                    if (m.kind == 'W') {
                        assertFalse(sink.bufferFree());
                        sink.onWriteCompletion(m.bytes);
                        receivedBytes += m.bytes;
                    } else if (m.kind == 'D') {
                        sink.onStreamMessage();
                        receivedBytes += m.bytes;
                    } else {
                        assertEquals(0, sink.onCancelAck());
                    }
                }
            }
            assertEquals(sentBytes, receivedBytes, "every byte arrives once");
        }
        assertTrue(writes > 1000 && voids > 100, "the model exercised writes " + writes + " and voids " + voids);
    }
}
