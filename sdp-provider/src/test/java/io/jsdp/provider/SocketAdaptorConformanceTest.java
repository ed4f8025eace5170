package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The socket adaptors ({@code SocketChannel.socket()}, {@code ServerSocketChannel.socket()}), run first
 * over the JDK's channels (the baseline), then over jsdp's (SDP on SoftRdma): one cached adaptor whose
 * state is the channel's, streams, half-close, SO_TIMEOUT on read and accept, asynchronous close,
 * refused and timed connects, options, and the channel's exception types.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SocketAdaptorConformanceTest extends ConformanceBase {
    /** Threads of its own: the common pool has one worker on 2 cores, and a reader there would starve a writer. */
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });




    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    private ServerSocket listen(String kind) throws IOException {
        ServerSocket s = track(provider(kind).openServerSocketChannel()).socket();
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return s;
    }

    /** [client, accepted], both adaptors. */
    private Socket[] pair(String kind) throws Exception {
        ServerSocket s = listen(kind);
        CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, threads);
        Socket c = track(provider(kind).openSocketChannel()).socket();
        c.connect(s.getLocalSocketAddress(), 10_000);
        Socket a = accepted.get(10, TimeUnit.SECONDS);
        track(a);
        return new Socket[] {c, a};
    }

    private static byte[] readN(InputStream in, int n) throws IOException {
        byte[] b = new byte[n];
        int off = 0;
        while (off < n) {
            int r = in.read(b, off, n - off);
            if (r < 0) {
                throw new IOException("EOF after " + off);
            }
            off += r;
        }
        return b;
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void socketIsOneCachedAdaptorWhoseChannelIsTheChannel(String kind) throws Exception {
        SocketChannel ch = track(provider(kind).openSocketChannel());
        Socket s = ch.socket();
        assertSame(s, ch.socket());
        assertSame(ch, s.getChannel());
        assertFalse(s.isConnected());
        assertFalse(s.isBound());
        assertEquals(-1, s.getLocalPort());
        assertEquals(0, s.getPort());
        ServerSocketChannel sc = track(provider(kind).openServerSocketChannel());
        assertSame(sc.socket(), sc.socket());
        assertSame(sc, sc.socket().getChannel());
        assertFalse(sc.socket().isBound());
        s.close();
        assertTrue(s.isClosed());
        assertFalse(ch.isOpen());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void streamsEchoBytesIntactAndAddressesAreTheChannels(String kind) throws Exception {
        Socket[] p = pair(kind);
        byte[] data = new byte[200_000];
        new SplittableRandom(3).nextBytes(data);
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            try {
                InputStream in = p[1].getInputStream();
                OutputStream out = p[1].getOutputStream();
                byte[] buf = new byte[5_000];
                for (int left = data.length; left > 0;) {
                    int n = in.read(buf);
                    out.write(buf, 0, n);
                    left -= n;
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, threads);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                p[0].getOutputStream().write(data);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, threads);
        assertArrayEquals(data, readN(p[0].getInputStream(), data.length));
        writer.get(30, TimeUnit.SECONDS);
        echo.get(30, TimeUnit.SECONDS);
        SocketChannel ch = p[0].getChannel();
        assertTrue(p[0].isConnected() && p[0].isBound() && !p[0].isClosed());
        assertEquals(ch.getRemoteAddress(), p[0].getRemoteSocketAddress());
        assertEquals(ch.getLocalAddress(), p[0].getLocalSocketAddress());
        assertEquals(p[1].getLocalPort(), p[0].getPort());
        assertEquals(InetAddress.getLoopbackAddress(), p[0].getInetAddress());
        if (kind.equals("jsdp")) {
            assertTrue(p[0].getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), p[0].getOption(SdpSocketOptions.TRANSPORT));
            assertTrue(p[1].getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
        }
        p[0].close();
        assertEquals(p[1].getLocalPort(), p[0].getPort(), "the remote port stays after close");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void halfCloseThroughTheAdaptorIsTheChannelsState(String kind) throws Exception {
        Socket[] p = pair(kind);
        p[0].getOutputStream().write(new byte[] {1, 2, 3});
        p[0].shutdownOutput();
        assertTrue(p[0].isOutputShutdown());
        assertThrows(SocketException.class, p[0]::getOutputStream);
        InputStream in = p[1].getInputStream();
        assertArrayEquals(new byte[] {1, 2, 3}, readN(in, 3));
        assertEquals(-1, in.read());
        p[1].getOutputStream().write(9);
        assertEquals(9, p[0].getInputStream().read());
        p[1].getChannel().shutdownInput();
        assertTrue(p[1].isInputShutdown(), "shut through the channel, seen by the adaptor");
        assertEquals(-1, in.read());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void soTimeoutOnReadThrowsSocketTimeoutExceptionAndTheSocketStaysUsable(String kind) throws Exception {
        Socket[] p = pair(kind);
        p[0].setSoTimeout(200);
        assertEquals(200, p[0].getSoTimeout());
        InputStream in = p[0].getInputStream();
        long start = System.nanoTime();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class, in::read);
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150), "waited the timeout");
        assertEquals("Read timed out", e.getMessage());
        assertTrue(p[0].getChannel().isOpen());
        p[1].getOutputStream().write(7);
        assertEquals(7, in.read());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void soTimeoutOnAcceptThrowsSocketTimeoutExceptionAndTheServerStaysUsable(String kind) throws Exception {
        ServerSocket s = listen(kind);
        s.setSoTimeout(200);
        assertEquals("Accept timed out", assertThrows(SocketTimeoutException.class, s::accept).getMessage());
        assertTrue(s.getChannel().isOpen());
        Socket c = track(provider(kind).openSocketChannel()).socket();
        c.connect(s.getLocalSocketAddress());
        Socket a = track(s.accept());
        assertNotNull(a.getChannel());
        assertEquals(c.getLocalPort(), a.getPort());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closeFromAnotherThreadEndsABlockedStreamReadWithAsynchronousCloseException(String kind) throws Exception {
        Socket[] p = pair(kind);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        InputStream in = p[0].getInputStream();
        Thread reader = new Thread(() -> {
            try {
                in.read();
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
        assertTrue(p[0].isClosed());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void connectingWhereNobodyListensIsRefused(String kind) throws Exception {
        ServerSocketChannel s = JDK.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        InetSocketAddress nobody = (InetSocketAddress) s.getLocalAddress();
        s.close();
        Socket c = track(provider(kind).openSocketChannel()).socket();
        assertThrows(ConnectException.class, () -> c.connect(nobody));
        assertTrue(c.isClosed(), "a failed connect closes the channel");
        Socket timed = track(provider(kind).openSocketChannel()).socket();
        assertThrows(ConnectException.class, () -> timed.connect(nobody, 2_000));
        assertTrue(timed.isClosed());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void optionsGoToTheChannelAndSoTimeoutStaysInTheAdaptor(String kind) throws Exception {
        SocketChannel ch = track(provider(kind).openSocketChannel());
        Socket s = ch.socket();
        s.setTcpNoDelay(true);
        assertEquals(Boolean.TRUE, ch.getOption(StandardSocketOptions.TCP_NODELAY));
        assertTrue(s.getTcpNoDelay());
        s.setKeepAlive(true);
        assertEquals(Boolean.TRUE, ch.getOption(StandardSocketOptions.SO_KEEPALIVE));
        s.setSoLinger(true, 5);
        assertEquals(5, s.getSoLinger());
        s.setSoLinger(false, 0);
        assertEquals(-1, s.getSoLinger());
        s.setReceiveBufferSize(65_536);
        assertTrue(s.getReceiveBufferSize() > 0);
        assertThrows(IllegalArgumentException.class, () -> s.setSendBufferSize(0));
        assertThrows(IllegalArgumentException.class, () -> s.setSoTimeout(-1));
        assertEquals(ch.supportedOptions(), s.supportedOptions());
        ch.close();
        assertThrows(SocketException.class, () -> s.setTcpNoDelay(false));
        assertThrows(SocketException.class, s::getSoTimeout);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aNonBlockingChannelsStreamsThrowIllegalBlockingModeException(String kind) throws Exception {
        Socket[] p = pair(kind);
        InputStream in = p[0].getInputStream();
        p[0].getChannel().configureBlocking(false);
        assertThrows(IllegalBlockingModeException.class, in::read);
        assertThrows(IllegalBlockingModeException.class, () -> p[0].getOutputStream().write(1));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void operationsOnAClosedAdaptorThrowAsTheJdksAdaptorDoes(String kind) throws Exception {
        Socket[] p = pair(kind);
        p[0].close();
        assertEquals("Socket is closed", assertThrows(SocketException.class, p[0]::getInputStream).getMessage());
        assertEquals("Socket is closed", assertThrows(SocketException.class, p[0]::getOutputStream).getMessage());
        assertThrows(IOException.class, p[0]::shutdownOutput);
        assertTrue(p[0].getLocalAddress().isAnyLocalAddress());
        ServerSocket s = listen(kind);
        s.close();
        assertTrue(s.isClosed());
        assertThrows(IOException.class, s::accept);
    }
}
