package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The exit drain in one JVM: a connection whose other end is in this JVM is not waited for (both ends die
 * together), and a connection's "nothing left to deliver" follows its output. The cross-process cases —
 * a peer that writes, closes and exits — are {@code PeerExitTwoJvmTest} in sdp-provider.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExitDrainTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    @Test
    void skipsConnectionsWhoseOtherEndIsInThisJvm() throws Exception {
        try (SdpPair p = SdpPair.open(new SdpOptions(), new SdpOptions())) {
            // more than B's receive buffers, never read: A's output cannot be delivered
            ByteBuffer big = ByteBuffer.allocate(4 << 20);
            int taken = p.a.write(big);
            assertTrue(taken > 0, "written: " + taken);
            p.a.close();
            assertFalse(p.a.exitDrainDone(), "A's DisConn waits behind data B does not read");
            long t0 = System.nanoTime();
            assertEquals(0, ExitDrain.drain(5_000), "nothing cut off: the other end ends with this JVM");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 2_000, "the drain waited " + ms + " ms for a connection inside this JVM");
        }
    }

    @Test
    void aConnectionIsDrainedOnceItsDisConnCompleted() throws Exception {
        try (SdpPair p = SdpPair.open(new SdpOptions(), new SdpOptions())) {
            assertTrue(p.a.exitDrainDone(), "an idle open connection has nothing to deliver");
            ByteBuffer big = ByteBuffer.allocate(4 << 20);
            int taken = p.a.write(big); // what the send buffer takes: more than B's receive buffers hold
            assertTrue(taken > 0, "written: " + taken);
            assertFalse(p.a.exitDrainDone(), "written data not delivered yet");
            p.a.close();
            ByteBuffer sink = ByteBuffer.allocate(64 * 1024);
            long deadline = System.nanoTime() + WAIT_NS;
            int r;
            long read = 0;
            do {
                sink.clear();
                r = Blocking.read(p.b, sink);
                read += Math.max(r, 0);
            } while (r >= 0 && System.nanoTime() < deadline);
            assertEquals(SdpConnection.EOF, r);
            assertEquals(taken, read, "every byte written, then EOF");
            assertTrue(p.a.awaitExitDrain(System.nanoTime() + WAIT_NS), p.a::snapshot);
        }
    }

    @Test
    void aPeerThatDoesNotReadDelaysOnlyItsOwnConnectionsDisConn() throws Exception {
        try (SdpPair slow = SdpPair.open(new SdpOptions(), new SdpOptions());
             SdpPair idle = SdpPair.open(new SdpOptions(), new SdpOptions())) {
            int taken = slow.a.write(ByteBuffer.allocate(4 << 20)); // more than B's receive buffers; B never reads
            assertTrue(taken > 0, "written: " + taken);
            long boundMs = 3_000;
            long t0 = System.nanoTime();
            // as if both peers were in other processes: the drain watches both
            Future<Integer> drain = TestThreads.POOL.submit(() -> ExitDrain.drain(List.of(slow.a, idle.a),
                t0 + TimeUnit.MILLISECONDS.toNanos(boundMs), boundMs));
            assertEquals(SdpConnection.EOF, Blocking.read(idle.b, ByteBuffer.allocate(1)), "the idle connection's DisConn");
            long eofMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(1, drain.get(boundMs * 3, TimeUnit.MILLISECONDS), "the slow connection is cut off at the bound");
            long drainMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(drainMs >= boundMs, "the drain waited " + drainMs + " ms for the slow peer");
            assertTrue(eofMs < boundMs / 2, "the idle connection got its DisConn only after " + eofMs
                + " ms: it waited for the slow peer");
        }
    }
}
