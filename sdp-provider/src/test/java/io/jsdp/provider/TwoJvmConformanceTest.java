package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The stream-channel conformance cases with the two ends in two JVMs: this JVM plays one end and a
 * {@link ConformancePeer} in a forked JVM the other, both on the same provider, first the JDK's TCP (the
 * baseline), then jsdp's, which then travel over SDP on SoftRdma's shared-memory fabric between the
 * processes. Partial reads and gathering writes, half-close both ways, shutdownInput, reset by a close
 * with unread data both ways, asynchronous close and interrupt (the peer then sees EOF), a refused
 * connect, non-blocking connect/accept/read/write through one selector, the fallback to TCP both ways,
 * and a peer killed with SIGKILL: a reset where it had unread data, EOF where it had read everything
 * (then writes fail with a reset). One peer JVM per
 * kind serves all cases; the killed ones are forked per case.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TwoJvmConformanceTest {
    private static final SelectorProvider JDK = SelectorProvider.provider();
    private static final SelectorProvider JSDP = new SdpSelectorProvider();
    private static final Map<String, PeerJvm> PEERS = new HashMap<>();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final List<PeerJvm> used = new ArrayList<>();

    static Stream<String> kinds() {
        return Stream.of("jdk", "jsdp");
    }

    private static SelectorProvider provider(String kind) {
        return kind.equals("jdk") ? JDK : JSDP;
    }

    /** The {@link ConformancePeer} kind that plays the other end for {@code kind}. */
    String peerKind(String kind) {
        return kind;
    }

    private static SelectorProvider provider(PeerJvm peer) {
        return peer.kind().equals("jdk") ? JDK : JSDP;
    }

    /** The long-lived peer of this kind, forked on first use (and again after a case broke it). */
    private PeerJvm peer(String kind) throws Exception {
        String peerKind = peerKind(kind);
        PeerJvm p = PEERS.get(peerKind);
        if (p == null || !p.isAlive()) {
            p = new PeerJvm(peerKind);
            PEERS.put(peerKind, p);
        }
        used.add(p);
        return p;
    }

    private <T extends AutoCloseable> T track(T c) {
        open.add(c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        Thread.interrupted();
        for (PeerJvm p : used) {
            try {
                if (p.isAlive()) {
                    p.call("RESET");
                }
            } catch (AssertionError stuck) {
                p.kill(); // forked afresh by the next case
            }
        }
    }

    @AfterAll
    static void stopPeers() throws Exception {
        for (PeerJvm p : PEERS.values()) {
            p.close();
        }
        PEERS.clear();
    }

    private static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /** This JVM's client connected to the peer's server: connection 0 at the peer. */
    private SocketChannel connectTo(PeerJvm peer, SelectorProvider client) throws Exception {
        int port = Integer.parseInt(peer.call("LISTEN"));
        peer.send("ACCEPT");
        SocketChannel c = track(client.openSocketChannel());
        assertTrue(c.connect(loopback(port)));
        String remoteTransport = peer.answer("ACCEPT");
        if (provider(peer) == JSDP && client == JSDP) {
            assertTrue(remoteTransport.startsWith("sdp"), remoteTransport);
            assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));
        }
        return c;
    }

    private SocketChannel connectTo(PeerJvm peer) throws Exception {
        return connectTo(peer, provider(peer));
    }

    private static void writeAll(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    private static byte[] readAll(SocketChannel c, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new IOException("EOF with " + b.remaining() + " to go");
            }
        }
        return b.array();
    }

    private static String crcOf(byte[] b) {
        return Long.toString(ConformancePeer.crc(b));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void echoesBytesIntactThroughPartialReadsAndGatheringWritesAcrossJvms(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        byte[] data = new byte[300_000];
        new SplittableRandom(2).nextBytes(data);
        peer.send("ECHO 0 " + data.length);
        ByteBuffer[] parts = {ByteBuffer.wrap(data, 0, 1000), ByteBuffer.wrap(data, 1000, 99_000), ByteBuffer.wrap(data, 100_000, 200_000)};
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                for (long left = data.length; left > 0;) {
                    left -= c.write(parts, 0, parts.length);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        assertArrayEquals(data, readAll(c, data.length));
        writer.get(30, TimeUnit.SECONDS);
        assertEquals(Integer.toString(data.length), peer.answer("ECHO"));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void halfCloseEachWayGivesEofAndTheOtherDirectionKeepsWorking(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        byte[] three = {1, 2, 3};
        writeAll(c, ByteBuffer.wrap(three));
        c.shutdownOutput();
        assertThrows(ClosedChannelException.class, () -> c.write(ByteBuffer.wrap(new byte[] {4})));
        assertEquals(crcOf(three), peer.call("READ 0 3"));
        assertEquals("-1", peer.call("READ1 0"));
        assertEquals("-1", peer.call("READ1 0"), "EOF stays");
        peer.call("WRITE 0 5");
        assertArrayEquals(ConformancePeer.pattern(5), readAll(c, 5));
        peer.call("SHUTOUT 0");
        assertEquals(-1, c.read(ByteBuffer.allocate(1)));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void shutdownInputMakesReadsReturnEofWhileOutputStillWorks(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        c.shutdownInput();
        assertEquals(-1, c.read(ByteBuffer.allocate(4)));
        assertEquals("100", peer.call("WRITE 0 100"));
        assertEquals(-1, c.read(ByteBuffer.allocate(4)));
        byte[] five = {5, 4, 3, 2, 1};
        writeAll(c, ByteBuffer.wrap(five));
        assertEquals(crcOf(five), peer.call("READ 0 5"));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aPeerClosingWithUnreadDataResetsThisEnd(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        writeAll(c, ByteBuffer.wrap(new byte[100]));
        Thread.sleep(200); // let it arrive
        peer.call("CLOSE 0");
        Thread.sleep(200); // let the reset arrive
        SocketException read = assertThrows(SocketException.class, () -> c.read(ByteBuffer.allocate(10)));
        assertEquals("Connection reset", read.getMessage());
        IOException write = assertThrows(IOException.class, () -> {
            for (int i = 0; i < 50; i++) {
                c.write(ByteBuffer.wrap(new byte[1000]));
                Thread.sleep(10);
            }
        });
        assertTrue(write.getMessage().equals("Connection reset by peer") || write.getMessage().equals("Broken pipe"), write.toString());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closingHereWithUnreadDataResetsThePeer(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        peer.call("WRITE 0 100");
        Thread.sleep(200);
        c.close();
        Thread.sleep(200);
        assertEquals("EX java.net.SocketException Connection reset", peer.outcome(sent(peer, "READ1 0")));
        String write = peer.outcome(sent(peer, "WRITES 0"));
        assertTrue(write.equals("EX java.io.IOException Connection reset by peer") || write.equals("EX java.io.IOException Broken pipe"),
            write);
    }

    private static String sent(PeerJvm peer, String command) {
        peer.send(command);
        return command.split(" ")[0];
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closeFromAnotherThreadEndsABlockedReadAndThePeerSeesEof(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                c.read(ByteBuffer.allocate(8));
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        reader.start();
        Thread.sleep(200);
        c.close();
        reader.join(5_000);
        assertFalse(reader.isAlive());
        assertTrue(thrown.get() instanceof AsynchronousCloseException, String.valueOf(thrown.get()));
        assertEquals("OK -1", peer.outcome(sent(peer, "READ1 0")));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void interruptingABlockedReadClosesTheChannelAndThePeerSeesEof(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SocketChannel c = connectTo(peer);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                c.read(ByteBuffer.allocate(8));
            } catch (Throwable t) {
                thrown.set(t);
                interrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        reader.start();
        Thread.sleep(200);
        reader.interrupt();
        reader.join(5_000);
        assertTrue(thrown.get() instanceof ClosedByInterruptException, String.valueOf(thrown.get()));
        assertTrue(interrupted.get());
        assertFalse(c.isOpen());
        assertEquals("OK -1", peer.outcome(sent(peer, "READ1 0")));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void connectingToAPortThePeerStoppedListeningOnIsRefused(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        int port = Integer.parseInt(peer.call("LISTEN"));
        peer.call("UNLISTEN");
        SocketChannel c = track(provider(kind).openSocketChannel());
        assertThrows(ConnectException.class, () -> c.connect(loopback(port)));
        assertFalse(c.isOpen());
    }

    /** Selects until {@code key} is ready for {@code op}; the selected set is cleared. */
    private static void awaitReady(Selector sel, SelectionKey key, int op) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        key.interestOps(op);
        while (!(sel.selectedKeys().contains(key) && (key.readyOps() & op) != 0)) {
            assertTrue(System.nanoTime() < deadline, "not ready for " + op + ": " + key.channel());
            sel.selectedKeys().clear();
            sel.select(500);
        }
        sel.selectedKeys().clear();
        key.interestOps(0);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void nonBlockingConnectAcceptReadAndWriteWithThePeerThroughOneSelector(String kind) throws Exception {
        PeerJvm peer = peer(kind);
        SelectorProvider p = provider(kind);
        Selector sel = track(p.openSelector());
        ServerSocketChannel server = track(p.openServerSocketChannel().bind(loopback(0)));
        server.configureBlocking(false);
        SelectionKey serverKey = server.register(sel, 0);
        int peerPort = Integer.parseInt(peer.call("LISTEN"));
        peer.send("ACCEPT"); // peer connection 0: our client
        SocketChannel client = track(p.openSocketChannel());
        client.configureBlocking(false);
        boolean now = client.connect(loopback(peerPort));
        SelectionKey clientKey = client.register(sel, 0);
        if (!now) {
            awaitReady(sel, clientKey, SelectionKey.OP_CONNECT);
            assertTrue(client.finishConnect(), "finishConnect after OP_CONNECT");
        }
        assertTrue(client.isConnected());
        peer.answer("ACCEPT");
        peer.send("CONNECT " + ((InetSocketAddress) server.getLocalAddress()).getPort()); // peer connection 1
        awaitReady(sel, serverKey, SelectionKey.OP_ACCEPT);
        SocketChannel accepted = track(server.accept());
        assertTrue(accepted != null);
        peer.answer("CONNECT");
        accepted.configureBlocking(false);
        SelectionKey acceptedKey = accepted.register(sel, 0);
        if (kind.equals("jsdp")) {
            assertTrue(client.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), client.getOption(SdpSocketOptions.TRANSPORT));
            assertTrue(accepted.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), accepted.getOption(SdpSocketOptions.TRANSPORT));
        }
        byte[] ping = "ping".getBytes(StandardCharsets.US_ASCII);
        awaitReady(sel, clientKey, SelectionKey.OP_WRITE);
        assertEquals(4, client.write(ByteBuffer.wrap(ping)));
        assertEquals(crcOf(ping), peer.call("READ 0 4"));
        awaitReady(sel, acceptedKey, SelectionKey.OP_WRITE);
        assertEquals(4, accepted.write(ByteBuffer.wrap(ping)));
        assertEquals(crcOf(ping), peer.call("READ 1 4"));
        peer.call("WRITE 0 4");
        peer.call("WRITE 1 4");
        for (SelectionKey k : List.of(clientKey, acceptedKey)) {
            ByteBuffer b = ByteBuffer.allocate(4);
            while (b.hasRemaining()) {
                awaitReady(sel, k, SelectionKey.OP_READ);
                assertTrue(((SocketChannel) k.channel()).read(b) > 0);
            }
            assertArrayEquals(ConformancePeer.pattern(4), b.array());
        }
        assertEquals(0, ((SocketChannel) acceptedKey.channel()).read(ByteBuffer.allocate(4)), "nothing more, no EOF");
    }

    @Test
    void aJsdpClientFallsBackToTcpForAJdkServerInAnotherJvm() throws Exception {
        PeerJvm peer = peer("jdk");
        SocketChannel c = connectTo(peer, JSDP);
        String t = c.getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(t.startsWith("tcp (no SDP listener at"), t);
        peer.call("WRITE 0 3");
        assertArrayEquals(ConformancePeer.pattern(3), readAll(c, 3));
    }

    @Test
    void aJsdpClientInAnotherJvmFallsBackToTcpForAJdkServer() throws Exception {
        PeerJvm peer = peer("jsdp");
        ServerSocketChannel s = track(JDK.openServerSocketChannel().bind(loopback(0)));
        String t = peer.call("CONNECT " + ((InetSocketAddress) s.getLocalAddress()).getPort());
        assertTrue(t.startsWith("tcp_(no_SDP_listener_at"), t);
        SocketChannel a = track(s.accept());
        writeAll(a, ByteBuffer.wrap(new byte[] {1, 2}));
        assertEquals(crcOf(new byte[] {1, 2}), peer.call("READ 0 2"));
    }

    @Test
    void aJdkClientInAnotherJvmReachesAJsdpServerOverTcp() throws Exception {
        PeerJvm peer = peer("jdk");
        ServerSocketChannel s = track(JSDP.openServerSocketChannel().bind(loopback(0)));
        assertEquals("-", peer.call("CONNECT " + ((InetSocketAddress) s.getLocalAddress()).getPort()));
        SocketChannel a = track(s.accept());
        String t = a.getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(t.startsWith("tcp"), t);
        peer.call("WRITE 0 3");
        assertArrayEquals(ConformancePeer.pattern(3), readAll(a, 3));
    }

    @Test
    void aJdkClientReachesAJsdpServerInAnotherJvmOverTcp() throws Exception {
        PeerJvm peer = peer("jsdp");
        int port = Integer.parseInt(peer.call("LISTEN"));
        peer.send("ACCEPT");
        SocketChannel c = track(JDK.openSocketChannel());
        assertTrue(c.connect(loopback(port)));
        String t = peer.answer("ACCEPT");
        assertTrue(t.startsWith("tcp"), t);
        writeAll(c, ByteBuffer.wrap(new byte[] {3}));
        assertEquals(crcOf(new byte[] {3}), peer.call("READ 0 1"));
    }

    /** Kills a fresh peer of {@code kind} holding one connection from this JVM (with 100 bytes it never read, or none). */
    private SocketChannel connectionToAKilledPeer(String kind, boolean leaveDataUnread) throws Exception {
        try (PeerJvm doomed = new PeerJvm(peerKind(kind))) {
            SocketChannel c = connectTo(doomed);
            if (leaveDataUnread) {
                writeAll(c, ByteBuffer.wrap(new byte[100]));
                Thread.sleep(200); // let it arrive, unread
            }
            doomed.kill();
            return c;
        }
    }

    private static void assertWritesFailAsAfterAReset(SocketChannel c) {
        IOException write = assertThrows(IOException.class, () -> {
            for (int i = 0; i < 50; i++) {
                c.write(ByteBuffer.wrap(new byte[1000]));
                Thread.sleep(10);
            }
        });
        assertTrue(write.getMessage().equals("Connection reset by peer") || write.getMessage().equals("Broken pipe"), write.toString());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aPeerKilledWithUnreadDataResetsTheConnection(String kind) throws Exception {
        SocketChannel c = connectionToAKilledPeer(kind, true);
        // the JDK: the kernel closes a killed process's sockets, and one with unread data with a reset
        SocketException read = assertThrows(SocketException.class, () -> c.read(ByteBuffer.allocate(10)));
        assertEquals("Connection reset", read.getMessage());
        assertWritesFailAsAfterAReset(c);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aPeerKilledWithNothingUnreadGivesEofThenWritesFail(String kind) throws Exception {
        SocketChannel c = connectionToAKilledPeer(kind, false);
        assertEquals(-1, c.read(ByteBuffer.allocate(10)), "EOF: the peer had read everything");
        assertEquals(-1, c.read(ByteBuffer.allocate(10)), "EOF stays");
        assertWritesFailAsAfterAReset(c);
    }
}
