package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** ShmNode in one process: lifecycle, one per directory, and bad frames close only their connection. */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ShmNodeTest {
    @TempDir
    Path tmp;

    @Test
    void closeDeletesSocketAndOwnSegmentsAndIsIdempotent() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        ShmNode node = ShmNode.open(r, ShmSettings.defaults());
        Path socket = r.nodeSocket(node.id());
        SharedSegment seg = node.createSegment(4096);
        assertTrue(Files.exists(socket));
        assertTrue(Files.exists(seg.path()));
        node.close();
        node.close();
        assertFalse(node.isOpen());
        assertFalse(Files.exists(socket));
        assertFalse(Files.exists(seg.path()));
        assertThrows(IOException.class, () -> node.createSegment(64));
        // the directory is free for a new node of this process
        ShmNode.open(r, ShmSettings.defaults()).close();
    }

    @Test
    void segmentsAreSparseOnlyWhileTheFileSystemKeepsTheReserve() throws Exception {
        int bytes = 1 << 20;
        try (ShmNode node = ShmNode.open(new Rendezvous(tmp.resolve("sparse")), ShmSettings.defaults().withSparseReserveBytes(0))) {
            SharedSegment seg = node.createSegment(bytes);
            assertTrue(allocatedBytes(seg.path()) < bytes / 4, () -> "sparse segment has " + allocatedBytes(seg.path())
                + " bytes allocated");
            ByteBuffer b = seg.buffer();
            for (int i = 0; i < bytes; i += 8) {
                assertEquals(0L, b.getLong(i), "byte " + i + " of a new segment");
            }
            b.putLong(bytes / 2, 42L);
            assertEquals(42L, node.openSegment(seg.name()).buffer().getLong(bytes / 2));
        }
        // -1, and a reserve the file system cannot keep: written with zeros, every page allocated now
        for (long reserve : new long[] {-1, Long.MAX_VALUE}) {
            try (ShmNode node = ShmNode.open(new Rendezvous(tmp.resolve("filled" + (reserve < 0 ? "Never" : "NoRoom"))),
                    ShmSettings.defaults().withSparseReserveBytes(reserve))) {
                SharedSegment seg = node.createSegment(bytes);
                assertTrue(allocatedBytes(seg.path()) >= bytes, () -> "reserve " + reserve + ": "
                    + allocatedBytes(seg.path()) + " bytes allocated");
            }
        }
    }

    /** Bytes the file system allocated to a file ({@code stat}: the testbed's fabric is Linux-only). */
    private static long allocatedBytes(Path p) {
        try {
            Process proc = new ProcessBuilder("stat", "-c", "%b %B", p.toString()).redirectErrorStream(true).start();
            String[] out = new String(proc.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII)
                .trim().split(" ");
            assertEquals(0, proc.waitFor(), () -> String.join(" ", out));
            return Long.parseLong(out[0]) * Long.parseLong(out[1]);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void secondNodeOfOneProcessOnOneDirectoryIsRefused() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults())) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> ShmNode.open(new Rendezvous(tmp.resolve("rv")), ShmSettings.defaults()));
            assertTrue(e.getMessage().contains(node.id().token()), e.getMessage());
        }
    }

    @Test
    void peerSegmentIsMappedByNameAndSharesBytes() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults())) {
            SharedSegment seg = node.createSegment(8192);
            SharedSegment view = node.openSegment(seg.name());
            assertFalse(view.owned());
            seg.buffer().putLong(4096, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, view.buffer().getLong(4096));
            assertThrows(IOException.class, () -> node.openSegment("../escape"));
            assertThrows(IOException.class, () -> node.openSegment("seg-1-2-3"));
        }
    }

    /** Connects {@code ch} to the node, says HELLO as this JVM's parent and waits until the node names it. */
    private static NodeId sayHello(Rendezvous r, ShmNode node, SocketChannel ch) throws Exception {
        ch.connect(UnixDomainSocketAddress.of(r.nodeSocket(node.id())));
        NodeId fake = new NodeId(ProcessHandle.current().parent().orElseThrow().pid(), 0);
        ByteBuffer f = ByteBuffer.allocate(ShmFrame.LENGTH);
        ShmFrame.put(f, ShmFrame.HELLO, (int) fake.pid(), fake.start());
        ch.write(f.flip());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!node.peers().contains(fake)) {
            assertTrue(System.nanoTime() < deadline);
            Thread.sleep(5);
        }
        return fake;
    }

    @Test
    void malformedFrameClosesOnlyThatConnection() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults())) {
            for (int type : new int[] {99, ShmFrame.DOORBELL}) { // unknown type; DOORBELL before HELLO
                try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                    ch.connect(UnixDomainSocketAddress.of(r.nodeSocket(node.id())));
                    ByteBuffer f = ByteBuffer.allocate(ShmFrame.LENGTH);
                    ShmFrame.put(f, type, 0, 7);
                    ch.write(f.flip());
                    assertEquals(-1, ch.read(ByteBuffer.allocate(16)), "the node closed the connection");
                }
            }
            assertTrue(node.isOpen());
            // still serving: a well-behaved client is accepted and named by its HELLO
            try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                sayHello(r, node, ch);
            }
        }
    }

    @Test
    void silentControlConnectionsAreCappedAndClosedAfterTheHelloTimeout() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        ShmNode node;
        System.setProperty(ShmNode.HELLO_TIMEOUT_MS_PROP, "300");
        try {
            node = ShmNode.open(r, ShmSettings.defaults().withPeerCheckMs(50));
        } finally {
            System.clearProperty(ShmNode.HELLO_TIMEOUT_MS_PROP);
        }
        List<SocketChannel> silent = new ArrayList<>();
        try (node) {
            // a local process opens connections to the node's socket and says nothing
            for (int i = 0; i < ShmNode.MAX_UNIDENTIFIED + 8; i++) {
                SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                ch.connect(UnixDomainSocketAddress.of(r.nodeSocket(node.id())));
                silent.add(ch);
            }
            long t0 = System.nanoTime();
            int closed = 0;
            for (SocketChannel ch : silent) {
                if (ch.read(ByteBuffer.allocate(16)) == -1) { // blocks until the node closes it
                    closed++;
                }
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(silent.size(), closed, "every silent connection was closed by the node");
            assertTrue(ms < 5_000, "within the HELLO timeout and a sweep, not never: " + ms + " ms");
            assertTrue(node.isOpen());
            // still serving: a well-behaved client is accepted and named by its HELLO
            try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                NodeId fake = sayHello(r, node, ch);
                Thread.sleep(600); // past the timeout: a connection that said HELLO stays
                assertTrue(node.peers().contains(fake), "an identified connection is not timed out");
            }
        } finally {
            for (SocketChannel ch : silent) {
                ch.close();
            }
        }
    }

    @Test
    void settingsAreValidatedWithThePropertyNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ShmSettings.defaults().withSpinNs(-1));
        assertTrue(e.getMessage().contains(ShmSettings.SPIN_NS_PROP));
        e = assertThrows(IllegalArgumentException.class, () -> ShmSettings.defaults().withSparseReserveBytes(-2));
        assertTrue(e.getMessage().contains(ShmSettings.SPARSE_RESERVE_BYTES_PROP));
        String old = System.getProperty(ShmSettings.PEER_CHECK_MS_PROP);
        System.setProperty(ShmSettings.PEER_CHECK_MS_PROP, "soon");
        try {
            e = assertThrows(IllegalArgumentException.class, ShmSettings::fromSystemProperties);
            assertTrue(e.getMessage().contains(ShmSettings.PEER_CHECK_MS_PROP) && e.getMessage().contains("soon"));
        } finally {
            if (old == null) {
                System.clearProperty(ShmSettings.PEER_CHECK_MS_PROP);
            } else {
                System.setProperty(ShmSettings.PEER_CHECK_MS_PROP, old);
            }
        }
        assertEquals(ShmSettings.defaults(), ShmSettings.fromSystemProperties());
    }
}
