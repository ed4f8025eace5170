package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A peer process that writes, closes and exits at once: over TCP its kernel goes on sending after the
 * process is gone, so this end reads every byte and then EOF; jsdp's connection lives in the process,
 * which must therefore not end before the peer has everything (the exit drain, {@code docs/protocol.md}
 * section 7). Each case forks a fresh {@link ConformancePeer}, JDK TCP first (the baseline), then jsdp
 * over SoftRdma's shared-memory fabric. The peer writes {@code n} bytes; this end reads all but the last
 * {@code tail} before the peer closes, so {@code tail} bytes are still on their way when the peer's
 * process starts to exit — more than this end's receive buffers (16 × 32 KiB) leaves data in the peer's
 * send buffers at close. This end reads the rest only once the exit has begun.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PeerExitTwoJvmTest {
    private static final SelectorProvider JDK = SelectorProvider.provider();
    private static final SelectorProvider JSDP = new SdpSelectorProvider();
    /** How long this end leaves the exiting peer alone before it reads on: time enough for an undrained exit. */
    private static final long EXIT_HEAD_START_MS = 300;

    private static SelectorProvider provider(String kind) {
        return kind.equals("jdk") ? JDK : JSDP;
    }

    /** This JVM's client connected to a fresh peer's server: connection 0 at the peer. */
    private static SocketChannel connectTo(PeerJvm peer, String kind) throws Exception {
        int port = Integer.parseInt(peer.call("LISTEN"));
        peer.send("ACCEPT");
        SocketChannel c = provider(kind).openSocketChannel();
        assertTrue(c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)));
        String remote = peer.answer("ACCEPT");
        if (kind.equals("jsdp")) {
            assertTrue(remote.startsWith("sdp"), remote);
            assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));
        }
        return c;
    }

    /** Reads exactly {@code n} bytes, failing on EOF or an exception. */
    private static void readFully(SocketChannel c, ByteBuffer b, int n) throws IOException {
        int end = b.position() + n;
        b.limit(end);
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new AssertionError("EOF after " + b.position() + " bytes, " + b.remaining() + " before the point");
            }
        }
    }

    /** Reads on until EOF or an exception; returns {@code "EOF"} or {@code "EX <class> <message>"}. */
    private static String readToTheEnd(SocketChannel c, ByteBuffer b) {
        b.limit(b.capacity());
        try {
            for (;;) {
                if (!b.hasRemaining()) {
                    ByteBuffer extra = ByteBuffer.allocate(1);
                    int r = c.read(extra);
                    if (r < 0) {
                        return "EOF";
                    }
                    return "MORE than was written";
                }
                if (c.read(b) < 0) {
                    return "EOF";
                }
            }
        } catch (IOException e) {
            return "EX " + e.getClass().getName() + " " + e.getMessage();
        }
    }

    /** The peer writes n bytes, then {@code ending} (commands after the write), and this end reads. */
    private static String run(String kind, int n, int tail, String how, String... ending) throws Exception {
        try (PeerJvm peer = new PeerJvm(kind); SocketChannel c = connectTo(peer, kind)) {
            peer.send("WRITE 0 " + n);
            for (String command : ending) {
                peer.send(command);
            }
            if (how.equals("main ends")) {
                peer.endInput();
            }
            ByteBuffer b = ByteBuffer.allocate(n);
            readFully(c, b, n - tail);
            assertEquals(Integer.toString(n), peer.answer("WRITE"));
            for (String command : ending) {
                peer.answer(command.split(" ")[0]);
            }
            Thread.sleep(EXIT_HEAD_START_MS);
            String end = readToTheEnd(c, b);
            byte[] got = Arrays.copyOf(b.array(), b.position());
            assertArrayEquals(Arrays.copyOf(ConformancePeer.pattern(n), got.length), got, "the bytes that came are the stream's start");
            assertEquals(0, peer.awaitExit(), "the peer's exit value");
            return b.position() + " " + end;
        }
    }

    @ParameterizedTest(name = "{0}: {1} bytes, {2} unread at close")
    @CsvSource({"jdk, 1, 1", "jsdp, 1, 1", "jdk, 100000, 100000", "jsdp, 100000, 100000", "jdk, 4194304, 786432",
        "jsdp, 4194304, 786432"})
    void aPeerThatClosesAndExitsDeliversEveryByteThenEof(String kind, int n, int tail) throws Exception {
        assertEquals(n + " EOF", run(kind, n, tail, "System.exit", "CLOSE 0", "EXIT"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "jsdp"})
    void aPeerWhoseMainReturnsAfterCloseDeliversEveryByteThenEof(String kind) throws Exception {
        // ConformancePeer closes its connections when its input ends, then main returns: the JVM ends
        int n = 4 << 20;
        assertEquals(n + " EOF", run(kind, n, 786_432, "main ends"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "jsdp"})
    void aPeerThatExitsWithoutClosingDeliversEveryByteThenEof(String kind) throws Exception {
        // the kernel closes a TCP socket the process left open at exit as close() would: a FIN after the data
        int n = 4 << 20;
        assertEquals(n + " EOF", run(kind, n, 786_432, "System.exit", "EXIT"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "jsdp"})
    void aPeerThatExitsWithAnIdleConnectionOpenEndsAtOnceWithEof(String kind) throws Exception {
        // jsdp: zero copy with SinkAvail is negotiated (the provider's default); an idle connection has
        // nothing to deliver, so the exit drain must not wait out jsdp.exitDrainMs (10 s)
        try (PeerJvm peer = new PeerJvm(kind); SocketChannel c = connectTo(peer, kind)) {
            peer.send("WRITE 0 1000");
            readFully(c, ByteBuffer.allocate(1000), 1000);
            assertEquals("1000", peer.answer("WRITE"));
            long t0 = System.nanoTime();
            peer.send("EXIT");
            peer.answer("EXIT");
            assertEquals(0, peer.awaitExit(), "the peer's exit value");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(-1, c.read(ByteBuffer.allocate(1)), "EOF: the connection the peer left open ends as TCP's");
            assertTrue(ms < 5_000, kind + " peer took " + ms + " ms to exit with an idle connection open");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "jsdp"})
    void aPeerThatClosesWithLingerZeroAndExitsResetsTheConnection(String kind) throws Exception {
        String r = run(kind, 100_000, 100_000, "System.exit", "LINGER 0 0", "CLOSE 0", "EXIT");
        System.out.println(kind + " linger 0: " + r);
        assertTrue(r.endsWith("EX java.net.SocketException Connection reset"), r);
    }

    /**
     * Waits until the peer stopped sending: the bytes waiting here stayed the same for 100 ms. A peer
     * halted while its messages are still on their way may lose some it had credits for, which no reader
     * can tell from the end of the stream ({@code docs/protocol.md} section 7); once it is stalled for
     * credits, what it holds is what the halt cuts off.
     */
    private static void awaitPeerStalled(SocketChannel c) throws Exception {
        int last = -1;
        int same = 0;
        for (long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); System.nanoTime() - end < 0 && same < 5;) {
            Thread.sleep(20);
            int now = c.socket().getInputStream().available();
            same = now == last && now > 0 ? same + 1 : 0;
            last = now;
        }
        assertTrue(same >= 5, "the peer never stalled: " + last + " bytes waiting");
    }

    @ParameterizedTest
    @ValueSource(strings = {"jdk", "jsdp"})
    void aPeerThatHaltsWithDataHeldForCreditsResetsTheConnectionAfterWhatArrived(String kind) throws Exception {
        // A crash: Runtime.halt, no close, no shutdown hook. TCP's kernel still sends everything written, then
        // a FIN. jsdp cannot: data the peer still held in its send slots (here: more than this end's receive
        // buffers) died with its process, and the reader must not mistake the cut for the end of the stream.
        int n = 4 << 20;
        int tail = 786_432;
        String r;
        try (PeerJvm peer = new PeerJvm(kind); SocketChannel c = connectTo(peer, kind)) {
            peer.send("WRITE 0 " + n);
            ByteBuffer b = ByteBuffer.allocate(n);
            readFully(c, b, n - tail);
            assertEquals(Integer.toString(n), peer.answer("WRITE"));
            awaitPeerStalled(c); // our receive buffers full, the rest held for credits
            peer.call("HALT");
            Thread.sleep(EXIT_HEAD_START_MS);
            String end = readToTheEnd(c, b);
            byte[] got = Arrays.copyOf(b.array(), b.position());
            assertArrayEquals(Arrays.copyOf(ConformancePeer.pattern(n), got.length), got, "the bytes that came are the stream's start");
            assertEquals(0, peer.awaitExit(), "the peer's exit value");
            r = b.position() + " " + end;
        }
        if (kind.equals("jdk")) {
            assertEquals(n + " EOF", r);
        } else {
            String[] f = r.split(" ", 2);
            assertTrue(Integer.parseInt(f[0]) < n && Integer.parseInt(f[0]) >= n - tail, r);
            assertEquals("EX java.net.SocketException Connection reset", f[1], "after the data that arrived, a reset");
        }
    }

    @ParameterizedTest(name = "{0}: {1} bytes, {2} unread at close")
    @CsvSource({"jdk, 100000, 100000", "jsdp, 100000, 100000", "jdk, 4194304, 786432", "jsdp, 4194304, 786432"})
    void aJavaNetSocketPeerThatClosesAndExitsDeliversEveryByteThenEof(String kind, int n, int tail) throws Exception {
        // the peer's java.net.Socket: jsdp's SocketImpl (SdpSocketImpl) through the installed factories
        try (PeerJvm peer = new PeerJvm(kind);
             ServerSocketChannel server = provider(kind).openServerSocketChannel()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            peer.send("NETCONNECT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            try (SocketChannel c = server.accept()) {
                String remote = peer.answer("NETCONNECT");
                if (kind.equals("jsdp")) {
                    assertTrue(remote.startsWith("sdp"), remote);
                }
                peer.send("NETWRITE 0 " + n);
                peer.send("NETCLOSE 0");
                peer.send("EXIT");
                ByteBuffer b = ByteBuffer.allocate(n);
                readFully(c, b, n - tail);
                assertEquals(Integer.toString(n), peer.answer("NETWRITE"));
                peer.answer("NETCLOSE");
                peer.answer("EXIT");
                Thread.sleep(EXIT_HEAD_START_MS);
                String end = readToTheEnd(c, b);
                assertArrayEquals(ConformancePeer.pattern(n), Arrays.copyOf(b.array(), b.position()));
                assertEquals("EOF", end);
                assertEquals(0, peer.awaitExit(), "the peer's exit value");
            }
        }
    }
}
