package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A peer killed -9 is reported to PeerListeners within the 2 s bound of issue 3, and swept away. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerLossTest {
    private static final long BOUND_MS = 2_000;

    @TempDir
    Path tmp;

    @Test
    void killedPeersEndOfStreamReachesOnPeerGoneWithinTwoSeconds() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        BlockingQueue<NodeId> gone = new ArrayBlockingQueue<>(4);
        BlockingQueue<Long> goneAtNs = new ArrayBlockingQueue<>(4);
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults().withPeerCheckMs(200));
             ChildJvm child = ChildJvm.start("connect", r.directory().toString(), NodeId.current().token())) {
            node.addPeerListener(p -> {
                goneAtNs.add(System.nanoTime());
                gone.add(p);
            });
            NodeId childId = NodeId.parse(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!node.peers().contains(childId)) {
                assertTrue(System.nanoTime() < deadline, "the child's HELLO never arrived");
                Thread.sleep(5);
            }

            long killedNs = System.nanoTime();
            child.kill();
            NodeId reported = gone.poll(BOUND_MS, TimeUnit.MILLISECONDS);
            assertEquals(childId, reported, "onPeerGone within " + BOUND_MS + " ms of the kill");
            long latencyMs = TimeUnit.NANOSECONDS.toMillis(goneAtNs.take() - killedNs);
            System.out.println("peer gone reported " + latencyMs + " ms after kill -9 (includes reaping the child)");
            assertFalse(node.peers().contains(childId));

            // The sweep (every 200 ms here) reclaims the dead child's socket file without being asked.
            Path socket = r.nodeSocket(childId);
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MS);
            while (Files.exists(socket)) {
                assertTrue(System.nanoTime() < deadline, "sweep did not reclaim " + socket);
                Thread.sleep(10);
            }
            Thread.sleep(300);
            assertTrue(gone.isEmpty(), "reported once: " + gone);
        }
    }
}
