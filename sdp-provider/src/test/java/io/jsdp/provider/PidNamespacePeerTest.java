package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.Rendezvous;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30: liveness across PID namespaces. A peer JVM in a PID namespace of its own (as in a container
 * that shares the host's /dev/shm and network) has pid 1 there, and its /proc shows only its namespace:
 * judged by {@code /proc/<pid>}, each side would find the other dead at its first sweep, fail their
 * connections and delete their files. Each node holds a lock on its life file instead, which the kernel
 * keeps across namespaces and drops when the process dies: the connection carries on across many sweeps,
 * and once the peer is killed its files are reclaimed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PidNamespacePeerTest {
    private static final SelectorProvider JSDP = new SdpSelectorProvider();
    private static final int BYTES = 50_000;
    /** Several of the nodes' liveness sweeps ({@code jsdp.soft.peerCheckMs}, 500 ms). */
    private static final long SWEEPS_MS = 3_000;

    private static boolean unshareWorks() {
        try {
            Process p = new ProcessBuilder("unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "true")
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Set<String> lifeFiles() throws IOException {
        try (Stream<Path> s = Files.list(Rendezvous.defaultDirectory())) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("live-")).collect(Collectors.toSet());
        }
    }

    private static void roundTrip(SocketChannel c, PeerJvm peer, int round) throws Exception {
        ByteBuffer out = ByteBuffer.wrap(ConformancePeer.pattern(BYTES));
        while (out.hasRemaining()) {
            c.write(out);
        }
        assertEquals(Long.toString(ConformancePeer.crc(ConformancePeer.pattern(BYTES))), peer.call("READ 0 " + BYTES),
            "round " + round + ": our bytes reached the peer");
        assertEquals(Integer.toString(BYTES), peer.call("WRITE 0 " + BYTES));
        ByteBuffer in = ByteBuffer.allocate(BYTES);
        while (in.hasRemaining()) {
            assertTrue(c.read(in) >= 0, "round " + round + ": EOF");
        }
        assertArrayEquals(ConformancePeer.pattern(BYTES), in.array(), "round " + round + ": the peer's bytes reached us");
    }

    @Test
    void aPeerInAnotherPidNamespaceKeepsItsConnectionAcrossSweepsAndIsReclaimedWhenKilled() throws Exception {
        assumeTrue(unshareWorks(), "unshare --pid needs root (CI runs as root)");
        SocketChannel c = JSDP.openSocketChannel();
        Set<String> before = lifeFiles();
        try (PeerJvm peer = new PeerJvm("jsdp", List.of(), List.of("unshare", "--pid", "--fork", "--kill-child", "--mount-proc"));
             c) {
            int port = Integer.parseInt(peer.call("LISTEN"));
            peer.send("ACCEPT");
            assertTrue(c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)));
            String accepted = peer.answer("ACCEPT");
            assertTrue(accepted.startsWith("sdp"), "the peer's end is on SDP: " + accepted);
            assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));
            Set<String> theirs = new HashSet<>(lifeFiles());
            theirs.removeAll(before);
            theirs.remove("live-" + NodeId.current().token()); // ours, when this JVM's node opened for this connect
            assertEquals(1, theirs.size(), "the peer's life file: " + theirs + ", before: " + before);
            String life = theirs.iterator().next();
            assertTrue(life.startsWith("live-1-"), "the peer is pid 1 of its namespace: " + life);

            roundTrip(c, peer, 1);
            Thread.sleep(SWEEPS_MS); // both nodes sweep several times: neither may find the other dead
            roundTrip(c, peer, 2);
            assertTrue(lifeFiles().contains(life), "the peer's files are still there");
            assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));

            peer.kill();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (lifeFiles().contains(life)) {
                assertTrue(System.nanoTime() < deadline, "a killed peer's files are reclaimed: " + lifeFiles());
                Thread.sleep(50);
            }
            assertEquals(-1, c.read(ByteBuffer.allocate(10)), "the peer had read everything: EOF");
        }
    }
}
