package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * One side of a message stream for the stress tests, confined to one thread: a ring of receive slots
 * and a ring of send slots in the side's region, signaled SENDs carrying a sequence number, and a
 * completion loop that checks every received message (length, sequence, payload pattern) and that
 * receive completions come in posting order. Allocates nothing per message.
 *
 * <pre>
 *  region: [ recv slot 0 | ... | recv slot W-1 ][ send slot 0 | ... | send slot W-1 ]
 *  message (PAYLOAD_BYTES): [ seq, 8 bytes big-endian ][ (byte) (seq * 31 + i), i = 8 .. PAYLOAD_BYTES-1 ]
 * </pre>
 */
final class Endpoint {
    static final int PAYLOAD_BYTES = 32;
    private static final int SLOT_BYTES = 64;
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    private final QueuePair qp;
    private final CompletionQueue cq;
    private final MemoryRegion mr;
    private final ByteBuffer buf;
    private final int window;
    private final int sendBase;
    private final SendWorkRequest swr = new SendWorkRequest();
    private final ReceiveWorkRequest rwr = new ReceiveWorkRequest();
    private final WorkCompletion[] wc = new WorkCompletion[16];
    /** Received sequence numbers not yet taken, a ring. */
    private final long[] inbox = new long[64];
    private int inboxHead;
    private int inboxTail;

    long recvPosted;
    long recvDone;
    long sendPosted;
    long sendDone;

    Endpoint(QueuePair qp, CompletionQueue cq, MemoryRegion mr, int window) {
        this.qp = qp;
        this.cq = cq;
        this.mr = mr;
        this.buf = mr.buffer();
        this.window = window;
        this.sendBase = window * SLOT_BYTES;
        assertTrue(2 * sendBase <= mr.length(), "region too small for the window");
        for (int i = 0; i < wc.length; i++) {
            wc[i] = new WorkCompletion();
        }
    }

    /** Posts the receive for the next message into the next receive slot. */
    int postRecv() {
        int slot = (int) (recvPosted % window);
        rwr.numSge(0);
        rwr.wrId(recvPosted).sge(0, mr.address() + (long) slot * SLOT_BYTES, SLOT_BYTES, mr.lkey());
        int rc = qp.postRecv(rwr);
        if (rc == Errno.OK) {
            recvPosted++;
        }
        return rc;
    }

    /** Sends message {@code seq} from the next send slot, first waiting for that slot's previous send to complete. */
    void send(long seq) {
        long deadline = System.nanoTime() + WAIT_NS;
        while (sendPosted - sendDone >= window) {
            if (pollOnce() == 0) {
                checkDeadline(deadline, "a send completion");
            }
        }
        int slot = (int) (sendPosted % window);
        int at = sendBase + slot * SLOT_BYTES;
        write(buf, at, seq);
        swr.clear().wrId(seq).opcode(Opcode.SEND).flags(SendFlags.SIGNALED)
            .sge(0, mr.address() + at, PAYLOAD_BYTES, mr.lkey());
        int rc;
        while ((rc = qp.postSend(swr)) == Errno.ENOMEM) {
            if (pollOnce() == 0) {
                checkDeadline(deadline, "send queue room");
            }
        }
        if (rc != Errno.OK) {
            fail("postSend: " + Errno.name(rc));
        }
        sendPosted++;
    }

    /** Waits until every send posted so far has completed. */
    void awaitSends() {
        long deadline = System.nanoTime() + WAIT_NS;
        while (sendDone < sendPosted) {
            if (pollOnce() == 0) {
                checkDeadline(deadline, "completion of send " + sendDone);
            }
        }
    }

    /** Waits for the next message and returns its sequence number. */
    long receive() {
        long deadline = System.nanoTime() + WAIT_NS;
        while (inboxHead == inboxTail) {
            if (pollOnce() == 0) {
                checkDeadline(deadline, "message " + recvDone);
            }
        }
        return inbox[inboxHead++ & (inbox.length - 1)];
    }

    /** Whether a received message waits to be taken with {@link #receive()}. */
    boolean hasMessage() {
        return inboxHead != inboxTail;
    }

    /** Polls once and handles what came: send completions are counted, messages checked and queued. */
    int pollOnce() {
        int n = cq.poll(wc, wc.length);
        if (n < 0) {
            fail("poll: " + Errno.name(n));
        }
        for (int i = 0; i < n; i++) {
            WorkCompletion w = wc[i];
            if (w.status() != WcStatus.SUCCESS) {
                fail("unexpected completion " + w);
            }
            if (w.opcode() == WcOpcode.SEND) {
                sendDone++;
                continue;
            }
            if (w.opcode() != WcOpcode.RECV || w.wrId() != recvDone || w.byteLen() != PAYLOAD_BYTES) {
                fail("expected the receive of message " + recvDone + " (" + PAYLOAD_BYTES + " bytes), got " + w);
            }
            int at = (int) (recvDone % window) * SLOT_BYTES;
            long seq = buf.getLong(at);
            check(buf, at, seq);
            recvDone++;
            if (inboxTail - inboxHead == inbox.length) {
                fail("inbox overflow");
            }
            inbox[inboxTail++ & (inbox.length - 1)] = seq;
        }
        return n;
    }

    /** Spins a little between polls that found nothing; fails at the deadline. */
    private static void checkDeadline(long deadline, String what) {
        if (System.nanoTime() - deadline > 0) {
            fail("no " + what + " within " + TimeUnit.NANOSECONDS.toMillis(WAIT_NS) + " ms");
        }
        // Yield rather than only spin: on a loaded 2-core machine two spinning sides otherwise hand
        // each message over at the scheduler's pace (milliseconds), and 100k-message tests crawl.
        Thread.yield();
    }

    static void write(ByteBuffer b, int at, long seq) {
        b.putLong(at, seq);
        for (int i = 8; i < PAYLOAD_BYTES; i++) {
            b.put(at + i, (byte) (seq * 31 + i));
        }
    }

    static void check(ByteBuffer b, int at, long seq) {
        for (int i = 8; i < PAYLOAD_BYTES; i++) {
            if (b.get(at + i) != (byte) (seq * 31 + i)) {
                fail("message " + seq + ": byte " + i + " is " + b.get(at + i) + ", expected " + (byte) (seq * 31 + i));
            }
        }
    }
}
