package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The host fabric's wire latency ({@link SoftFaults#wireLatencyNs(long)}): a message reaches the peer no
 * sooner than the latency after its post, whoever looks (a poller or the progress thread for an armed
 * queue); messages behind it are in flight at the same time, not one latency each; an RDMA WRITE behind
 * a message lands no sooner than that message. Host fabric only: the in-JVM fabric has no wires.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WireLatencyTest extends TwoDeviceTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LATENCY_NS = 100 * MS;
    private static final int SIG = SendFlags.SIGNALED;

    @Test
    void aPolledSendArrivesNoSoonerThanTheLatency() throws Exception {
        Connection c = connect(new Connection.Options());
        devA.faults().wireLatencyNs(LATENCY_NS);
        assertEquals(Errno.OK, c.recv(c.qpB, 7, c.mrB, 0, 64));
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 64));
        WorkCompletion got = c.poll(c.cqB);
        long elapsed = System.nanoTime() - t0;
        assertEquals(7, got.wrId());
        assertEquals(WcStatus.SUCCESS, got.status());
        assertTrue(elapsed >= LATENCY_NS, "arrived after " + elapsed + " ns, before the latency");
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
    }

    @Test
    void messagesBehindTheFirstTravelWithItNotOneLatencyEach() throws Exception {
        Connection c = connect(new Connection.Options());
        devA.faults().wireLatencyNs(LATENCY_NS);
        int n = 10;
        for (int i = 0; i < n; i++) {
            assertEquals(Errno.OK, c.recv(c.qpB, 100 + i, c.mrB, i * 64, 64));
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            assertEquals(Errno.OK, c.send(c.qpA, i, Opcode.SEND, SIG, c.mrA, i * 64, 64));
        }
        long posted = System.nanoTime();
        c.expectNothing(c.cqB, 20); // a fifth of the latency: nothing yet
        // Once the last one's latency is over, one poll finds all of them: they were in flight together.
        long sleepNs = posted + LATENCY_NS - System.nanoTime();
        if (sleepNs > 0) {
            TimeUnit.NANOSECONDS.sleep(sleepNs);
        }
        WorkCompletion[] wc = new WorkCompletion[n + 1];
        for (int i = 0; i < wc.length; i++) {
            wc[i] = new WorkCompletion();
        }
        // Polled until all are in, for at most half a latency more: one latency each would take n of them
        // (a single poll raced the device's own progress on a loaded machine)
        int got = 0;
        long pollEnd = System.nanoTime() + LATENCY_NS / 2;
        WorkCompletion[] batch = new WorkCompletion[n + 1];
        for (int i = 0; i < batch.length; i++) {
            batch[i] = new WorkCompletion();
        }
        while (got < n && System.nanoTime() - pollEnd < 0) {
            int k = c.cqB.poll(batch, batch.length - got);
            for (int i = 0; i < k; i++) {
                WorkCompletion t = wc[got + i];
                wc[got + i] = batch[i];
                batch[i] = t;
            }
            got += k;
            if (got < n) {
                Thread.sleep(1);
            }
        }
        assertEquals(n, got, "all " + n + " arrived within half a latency after the latency had passed");
        for (int i = 0; i < n; i++) {
            assertEquals(100 + i, wc[i].wrId(), "in order");
        }
        assertTrue(System.nanoTime() - t0 >= LATENCY_NS);
        for (int i = 0; i < n; i++) {
            assertEquals(i, c.poll(c.cqA).wrId());
        }
    }

    @Test
    void anArmedQueueIsToldWhenTheMessageArrives() throws Exception {
        armedQueueIsToldAfter(LATENCY_NS);
    }

    @Test
    void anArmedQueueIsToldOfAMessageOnAShortLatencyWire() throws Exception {
        // shorter than XpEngine.ARRIVAL_SPIN_MAX_NS: the progress thread polls for it instead of parking
        armedQueueIsToldAfter(XpEngine.ARRIVAL_SPIN_MAX_NS / 2);
    }

    private void armedQueueIsToldAfter(long latencyNs) throws Exception {
        Connection c = connect(new Connection.Options());
        devA.faults().wireLatencyNs(latencyNs);
        assertEquals(Errno.OK, c.recv(c.qpB, 7, c.mrB, 0, 64));
        assertEquals(Errno.OK, c.cqB.requestNotify(false));
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 64));
        // Nobody polls B: its progress thread must look again when the message arrives.
        CompletionQueue fired = c.chB.await(TimeUnit.SECONDS.toNanos(5));
        long elapsed = System.nanoTime() - t0;
        assertNotNull(fired, "no event within 5 s");
        assertSame(c.cqB, fired);
        c.cqB.acknowledgeEvents(1);
        assertTrue(elapsed >= latencyNs, "event after " + elapsed + " ns, before the latency of " + latencyNs);
        assertEquals(7, c.poll(c.cqB).wrId());
        assertEquals(WcStatus.SUCCESS, c.poll(c.cqA).status());
    }

    @Test
    void anRdmaWriteBehindAMessageLandsNoSoonerThanTheMessage() throws Exception {
        Connection c = connect(new Connection.Options());
        devA.faults().wireLatencyNs(LATENCY_NS);
        for (int i = 0; i < 16; i++) {
            c.mrA.buffer().put(1024 + i, (byte) (i + 1));
        }
        assertEquals(Errno.OK, c.recv(c.qpB, 7, c.mrB, 0, 64));
        long t0 = System.nanoTime();
        assertEquals(Errno.OK, c.send(c.qpA, 1, Opcode.SEND, SIG, c.mrA, 0, 64));
        assertEquals(Errno.OK, c.rdma(c.qpA, 2, Opcode.RDMA_WRITE, SIG, c.mrA, 1024, 16, c.mrB.address() + 2048,
            c.mrB.rkey()));
        c.expectNothing(c.cqA, 20); // A polls: the WRITE waits for the SEND's answer
        assertEquals(0, c.mrB.buffer().get(2048), "the WRITE landed before the message in front of it arrived");
        assertEquals(7, c.poll(c.cqB).wrId());
        assertEquals(1, c.poll(c.cqA).wrId());
        assertEquals(2, c.poll(c.cqA).wrId());
        assertTrue(System.nanoTime() - t0 >= LATENCY_NS);
        for (int i = 0; i < 16; i++) {
            assertEquals((byte) (i + 1), c.mrB.buffer().get(2048 + i), "byte " + i);
        }
    }

    @Test
    void aLatencyOutOfRangeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> devA.faults().wireLatencyNs(-1));
        assertThrows(IllegalArgumentException.class, () -> devA.faults().wireLatencyNs(XpEngine.WIRE_LATENCY_MAX_NS + 1));
        devA.faults().wireLatencyNs(XpEngine.WIRE_LATENCY_MAX_NS);
        assertEquals(XpEngine.WIRE_LATENCY_MAX_NS, devA.faults().wireLatencyNs());
        devA.faults().clear();
        assertEquals(0, devA.faults().wireLatencyNs(), "clear() turns it off");
    }
}
