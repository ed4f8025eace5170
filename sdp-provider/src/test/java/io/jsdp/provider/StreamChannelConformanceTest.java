package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSocketOptions;
import io.jsdp.flow.engine.SdpOptions;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Blocking stream-channel semantics, run first over the JDK's TCP channels (the baseline) and then over
 * jsdp's channels, which travel over SDP on SoftRdma between two jsdp ends: partial reads, half-close,
 * shutdown, reset, asynchronous close and interrupts with the JDK's exception types, refused connects;
 * and the fallback both ways between a jsdp end and a JDK end, with {@link SdpSocketOptions#TRANSPORT}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamChannelConformanceTest extends ConformanceBase {





    private ServerSocketChannel listen(SelectorProvider p) throws IOException {
        return track(p.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
    }

    /** [client, accepted] over the given providers. */
    private SocketChannel[] pair(SelectorProvider client, SelectorProvider server) throws Exception {
        ServerSocketChannel s = listen(server);
        CompletableFuture<SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        SocketChannel c = track(client.openSocketChannel());
        assertTrue(c.connect(s.getLocalAddress()));
        SocketChannel a = track(accepted.get(10, TimeUnit.SECONDS));
        return new SocketChannel[] {c, a};
    }

    private SocketChannel[] pair(String kind) throws Exception {
        return pair(provider(kind), provider(kind));
    }

    private static void writeAll(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    private static void readAll(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new IOException("EOF with " + b.remaining() + " to go");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void echoesBytesIntactThroughPartialReadsAndGatheringWrites(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        byte[] data = new byte[300_000];
        new SplittableRandom(1).nextBytes(data);
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            try {
                ByteBuffer b = ByteBuffer.allocate(7_777);
                long left = data.length;
                while (left > 0) {
                    b.clear();
                    int n = p[1].read(b);
                    assertTrue(n > 0);
                    left -= n;
                    b.flip();
                    writeAll(p[1], b);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        ByteBuffer[] parts = {ByteBuffer.wrap(data, 0, 1000), ByteBuffer.wrap(data, 1000, 99_000), ByteBuffer.wrap(data, 100_000, 200_000)};
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                long left = data.length;
                while (left > 0) {
                    left -= p[0].write(parts, 0, parts.length);
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        ByteBuffer got = ByteBuffer.allocate(data.length);
        readAll(p[0], got);
        writer.get(30, TimeUnit.SECONDS);
        echo.get(30, TimeUnit.SECONDS);
        assertArrayEquals(data, got.array());
        if (kind.equals("jsdp")) {
            assertTrue(p[0].getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), p[0].getOption(SdpSocketOptions.TRANSPORT));
            assertTrue(p[1].getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void halfCloseGivesEofAndThePeerCanStillAnswer(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        writeAll(p[0], ByteBuffer.wrap(new byte[] {1, 2, 3}));
        p[0].shutdownOutput();
        assertThrows(ClosedChannelException.class, () -> p[0].write(ByteBuffer.wrap(new byte[] {4})));
        ByteBuffer b = ByteBuffer.allocate(3);
        readAll(p[1], b);
        assertEquals(-1, p[1].read(ByteBuffer.allocate(1)));
        assertEquals(-1, p[1].read(ByteBuffer.allocate(1)), "EOF stays");
        writeAll(p[1], ByteBuffer.wrap(new byte[] {9}));
        ByteBuffer r = ByteBuffer.allocate(1);
        readAll(p[0], r);
        assertEquals(9, r.get(0));
        p[1].shutdownOutput();
        assertEquals(-1, p[0].read(ByteBuffer.allocate(1)));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aChannelIsConnectedUntilClosedHere(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        assertTrue(p[0].isConnected() && p[0].socket().isConnected());
        p[1].close();
        assertTrue(p[0].isConnected(), "the peer's close leaves this end connected");
        p[0].close();
        assertFalse(p[0].isConnected(), "a closed channel is not connected");
        assertFalse(p[0].isConnectionPending());
        assertFalse(p[0].socket().isConnected(), "nor is its socket adaptor");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void shutdownInputMakesReadsReturnEof(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        p[1].shutdownInput();
        assertEquals(-1, p[1].read(ByteBuffer.allocate(4)));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closingWithUnreadDataResetsThePeer(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        writeAll(p[0], ByteBuffer.wrap(new byte[100]));
        Thread.sleep(200); // let it arrive
        p[1].close();
        Thread.sleep(200); // let the reset arrive
        SocketException read = assertThrows(SocketException.class, () -> p[0].read(ByteBuffer.allocate(10)));
        assertEquals("Connection reset", read.getMessage());
        IOException write = assertThrows(IOException.class, () -> {
            for (int i = 0; i < 50; i++) {
                p[0].write(ByteBuffer.wrap(new byte[1000]));
                Thread.sleep(10);
            }
        });
        assertTrue(write.getMessage().equals("Connection reset by peer") || write.getMessage().equals("Broken pipe"),
            write.toString());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closeFromAnotherThreadEndsABlockedReadWithAsynchronousCloseException(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                p[0].read(ByteBuffer.allocate(8));
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        reader.start();
        Thread.sleep(200);
        p[0].close();
        reader.join(5_000);
        assertFalse(reader.isAlive());
        assertTrue(thrown.get() instanceof AsynchronousCloseException, String.valueOf(thrown.get()));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void interruptingABlockedReadClosesTheChannelAndKeepsTheStatus(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                p[0].read(ByteBuffer.allocate(8));
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
        assertFalse(p[0].isOpen());
    }

    /** Regression: the interrupt raced the close it causes; on JDK 25 a read now and then returned 0, channel open. */
    @ParameterizedTest
    @MethodSource("kinds")
    void interruptingAReadAtAnyMomentAlwaysClosesTheChannelWithClosedByInterruptException(String kind) throws Exception {
        for (int i = 0; i < 100; i++) {
            SocketChannel[] p = pair(kind);
            AtomicReference<Object> outcome = new AtomicReference<>();
            AtomicReference<Boolean> interrupted = new AtomicReference<>();
            Thread reader = new Thread(() -> {
                try {
                    outcome.set("returned " + p[0].read(ByteBuffer.allocate(8)));
                } catch (Throwable t) {
                    outcome.set(t);
                }
                interrupted.set(Thread.currentThread().isInterrupted());
            });
            reader.start();
            Thread.sleep(i % 10); // before the read, while it spins, while it is parked
            reader.interrupt();
            reader.join(5_000);
            assertTrue(outcome.get() instanceof ClosedByInterruptException, "iteration " + i + ": " + outcome.get());
            assertTrue(interrupted.get(), "iteration " + i);
            assertFalse(p[0].isOpen(), "iteration " + i);
            p[1].close();
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closeFromAnotherThreadEndsABlockedAccept(String kind) throws Exception {
        ServerSocketChannel s = listen(provider(kind));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread acceptor = new Thread(() -> {
            try {
                s.accept();
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        acceptor.start();
        Thread.sleep(200);
        s.close();
        acceptor.join(5_000);
        assertTrue(thrown.get() instanceof AsynchronousCloseException, String.valueOf(thrown.get()));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void connectingWhereNobodyListensIsRefused(String kind) throws Exception {
        ServerSocketChannel s = listen(JDK);
        InetSocketAddress nobody = (InetSocketAddress) s.getLocalAddress();
        s.close();
        SocketChannel c = track(provider(kind).openSocketChannel());
        assertThrows(ConnectException.class, () -> c.connect(nobody));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void optionsSetBeforeConnectAreKept(String kind) throws Exception {
        SocketChannel c = track(provider(kind).openSocketChannel());
        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
        assertEquals(Boolean.TRUE, c.getOption(StandardSocketOptions.TCP_NODELAY));
        assertThrows(IllegalArgumentException.class, () -> c.setOption(StandardSocketOptions.SO_RCVBUF, -1));
        assertThrows(UnsupportedOperationException.class, () -> c.getOption(StandardSocketOptions.IP_MULTICAST_TTL));
    }

    @Test
    void aJsdpClientFallsBackToTcpForAJdkServerAndSaysWhy() throws Exception {
        SocketChannel[] p = pair(JSDP, JDK);
        String t = p[0].getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(t.startsWith("tcp (no SDP listener at"), t);
        writeAll(p[0], ByteBuffer.wrap(new byte[] {5}));
        ByteBuffer b = ByteBuffer.allocate(1);
        readAll(p[1], b);
        assertEquals(5, b.get(0));
    }

    @Test
    void aJdkClientReachesAJsdpServerOverTcp() throws Exception {
        SocketChannel[] p = pair(JDK, JSDP);
        String t = p[1].getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(t.startsWith("tcp"), t);
        writeAll(p[1], ByteBuffer.wrap(new byte[] {6}));
        ByteBuffer b = ByteBuffer.allocate(1);
        readAll(p[0], b);
        assertEquals(6, b.get(0));
    }

    @Test
    void jsdpEndsTalkSdpAndNameTheDevice() throws Exception {
        SocketChannel[] p = pair(JSDP, JSDP);
        String t = p[0].getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(t.startsWith("sdp") && t.contains("device=") && t.contains("flowControl=credit"), t);
    }

    /** Issue 8: FLOW_CONTROL asks (client before connect, server before bind) and reads the negotiated scheme. */
    @ParameterizedTest
    @CsvSource({"packetized, packetized, packetized", "nic, nic, nic", "credit, credit, credit", "nic, packetized, credit",
        "packetized, credit, credit"})
    void flowControlOptionAsksForASchemeAndReadsTheNegotiatedOne(String client, String server, String expected) throws Exception {
        ServerSocketChannel s = track(JSDP.openServerSocketChannel());
        s.setOption(SdpSocketOptions.FLOW_CONTROL, server);
        assertEquals(server, s.getOption(SdpSocketOptions.FLOW_CONTROL));
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        assertThrows(IllegalStateException.class, () -> s.setOption(SdpSocketOptions.FLOW_CONTROL, "credit"));
        CompletableFuture<SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        SocketChannel c = track(JSDP.openSocketChannel());
        assertThrows(IllegalArgumentException.class, () -> c.setOption(SdpSocketOptions.FLOW_CONTROL, "window"));
        c.setOption(SdpSocketOptions.FLOW_CONTROL, client);
        assertEquals(client, c.getOption(SdpSocketOptions.FLOW_CONTROL));
        assertTrue(c.connect(s.getLocalAddress()));
        SocketChannel a = track(accepted.get(10, TimeUnit.SECONDS));
        assertEquals(expected, c.getOption(SdpSocketOptions.FLOW_CONTROL));
        assertEquals(expected, a.getOption(SdpSocketOptions.FLOW_CONTROL));
        assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).contains("flowControl=" + expected));
        assertThrows(IllegalStateException.class, () -> c.setOption(SdpSocketOptions.FLOW_CONTROL, "credit"));
        byte[] data = new byte[300_000];
        new java.util.Random(8).nextBytes(data);
        CompletableFuture<Void> w = CompletableFuture.runAsync(() -> {
            try {
                writeAll(c, ByteBuffer.wrap(data));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        ByteBuffer got = ByteBuffer.allocate(data.length);
        readAll(a, got);
        w.get(10, TimeUnit.SECONDS);
        assertArrayEquals(data, got.array());
    }

    @Test
    void spinNsSetsTheWindowBeforeAndAfterConnectAndRefusesNegatives() throws Exception {
        ServerSocketChannel s = listen(JSDP);
        SocketChannel c = track(JSDP.openSocketChannel());
        assertEquals(new SdpOptions().spinNs(), c.getOption(SdpSocketOptions.SPIN_NS)); // jsdp.spinNs
        c.setOption(SdpSocketOptions.SPIN_NS, 5_000L);
        assertEquals(5_000L, c.getOption(SdpSocketOptions.SPIN_NS));
        assertThrows(IllegalArgumentException.class, () -> c.setOption(SdpSocketOptions.SPIN_NS, -1L));
        assertTrue(c.connect(s.getLocalAddress()));
        SocketChannel a = track(s.accept());
        assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
        assertEquals(5_000L, c.getOption(SdpSocketOptions.SPIN_NS), "the connection's window");
        c.setOption(SdpSocketOptions.SPIN_NS, 0L);
        assertEquals(0L, c.getOption(SdpSocketOptions.SPIN_NS));
        a.setOption(SdpSocketOptions.SPIN_NS, 7_000L); // an accepted channel's too
        assertEquals(7_000L, a.getOption(SdpSocketOptions.SPIN_NS));
        a.write(ByteBuffer.wrap(new byte[] {42}));
        ByteBuffer one = ByteBuffer.allocate(1);
        assertEquals(1, c.read(one), "a read that parks at once still gets its byte");
    }

    @Test
    void useSdpFalseGoesStraightToTcpAndSaysSo() throws Exception {
        ServerSocketChannel s = listen(JSDP);
        SocketChannel c = track(JSDP.openSocketChannel());
        assertEquals(Boolean.TRUE, c.getOption(SdpSocketOptions.USE_SDP));
        c.setOption(SdpSocketOptions.USE_SDP, false);
        assertTrue(c.connect(s.getLocalAddress()));
        track(s.accept());
        assertEquals("tcp (SDP turned off on this socket)", c.getOption(SdpSocketOptions.TRANSPORT));
        assertThrows(IllegalStateException.class, () -> c.setOption(SdpSocketOptions.USE_SDP, true));
        assertThrows(IllegalArgumentException.class, () -> c.setOption(SdpSocketOptions.TRANSPORT, "sdp"));
    }

    @Test
    void interruptingAReadOnTheTcpFallbackClosesTheJsdpChannelToo() throws Exception {
        SocketChannel[] p = pair(JSDP, JDK);
        assertTrue(p[0].getOption(SdpSocketOptions.TRANSPORT).startsWith("tcp"));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                p[0].read(ByteBuffer.allocate(8));
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        reader.start();
        Thread.sleep(200);
        reader.interrupt();
        reader.join(5_000);
        assertTrue(thrown.get() instanceof ClosedByInterruptException, String.valueOf(thrown.get()));
        assertFalse(p[0].isOpen(), "the channel, not only its delegate, is closed");
        assertThrows(ClosedChannelException.class, () -> p[0].read(ByteBuffer.allocate(1)));
    }

    @Test
    void aBlockingCloseWithLingerWaitsUntilTheWrittenDataReachedThePeer() throws Exception {
        SocketChannel[] p = pair(JSDP, JSDP);
        p[0].setOption(StandardSocketOptions.SO_LINGER, 10);
        // more than the peer's receive buffers hold (16 x 32 KiB by default), less than they and our send
        // slots do: every write returns at once, and the rest waits in our slots for the peer's credits
        ByteBuffer big = ByteBuffer.allocate(768 << 10);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                writeAll(p[0], big);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        long readFrom = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(400);
        CompletableFuture<Long> reader = CompletableFuture.supplyAsync(() -> {
            try {
                while (System.nanoTime() < readFrom) {
                    Thread.sleep(10);
                }
                long n = 0;
                ByteBuffer b = ByteBuffer.allocate(64 * 1024);
                for (int r; (r = p[1].read(b.clear())) >= 0;) {
                    n += r;
                }
                return n;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        writer.get(10, TimeUnit.SECONDS);
        long t0 = System.nanoTime();
        p[0].close();
        long closeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(System.nanoTime() - readFrom >= 0, "close returned after " + closeMs + " ms, before the peer read anything");
        assertEquals(768L << 10, reader.get(10, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void interruptingABlockedAcceptClosesTheServerChannelAndKeepsTheStatus(String kind) throws Exception {
        ServerSocketChannel s = listen(provider(kind));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        Thread acceptor = new Thread(() -> {
            try {
                s.accept();
            } catch (Throwable t) {
                thrown.set(t);
                interrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        acceptor.start();
        Thread.sleep(200);
        acceptor.interrupt();
        acceptor.join(5_000);
        assertFalse(acceptor.isAlive(), "the interrupted accept still runs");
        assertTrue(thrown.get() instanceof ClosedByInterruptException, String.valueOf(thrown.get()));
        assertTrue(interrupted.get());
        assertFalse(s.isOpen());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aPendingInterruptLeavesNonBlockingReadsAndWritesAlone(String kind) throws Exception {
        SocketChannel[] p = pair(kind);
        p[0].configureBlocking(false);
        Thread.currentThread().interrupt();
        try {
            assertEquals(0, p[0].read(ByteBuffer.allocate(8)));
            assertEquals(3, p[0].write(ByteBuffer.wrap(new byte[] {1, 2, 3})));
            assertTrue(p[0].isOpen(), "only blocking operations are interruptible");
        } finally {
            assertTrue(Thread.interrupted());
        }
    }
}
