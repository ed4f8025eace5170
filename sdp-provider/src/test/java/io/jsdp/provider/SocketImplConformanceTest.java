package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Plain {@code java.net} sockets, run first over the JDK's own impl (the baseline), then over
 * {@link SdpSocketImpl} (SDP on SoftRdma), built through the protected {@code Socket(SocketImpl)} and
 * {@code ServerSocket(SocketImpl)} constructors since the JVM-wide factories cannot be set in a shared
 * test JVM ({@link SocketFactoriesForkedTest} does that in a child JVM). {@code java.net} semantics:
 * {@link SocketException}s, SO_TIMEOUT on read and accept with the socket still usable, close from
 * another thread, refused connects, interrupts (platform threads: not interruptible; virtual threads:
 * "Closed by interrupt").
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SocketImplConformanceTest extends ConformanceBase {
    /** Threads of its own: the common pool has one worker on 2 cores, and a reader there would starve a writer. */
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });


    /** A java.net.Socket on jsdp, as the client factory would make it. */
    static final class JsdpSocket extends Socket {
        JsdpSocket() throws SocketException {
            super(new SdpSocketImpl(false));
        }
    }

    /** A java.net.ServerSocket on jsdp, accepting into jsdp sockets, as with both factories installed. */
    static final class JsdpServerSocket extends ServerSocket {
        JsdpServerSocket() throws IOException {
            super(new SdpSocketImpl(true));
        }

        @Override
        public Socket accept() throws IOException {
            Socket s = new JsdpSocket();
            implAccept(s);
            return s;
        }
    }


    @AfterEach
    void stopThreads() {
        threads.shutdownNow();
    }

    private Socket socket(String kind) throws IOException {
        return track(kind.equals("jdk") ? new Socket() : new JsdpSocket());
    }

    private ServerSocket listen(String kind) throws IOException {
        ServerSocket s = track(kind.equals("jdk") ? new ServerSocket() : new JsdpServerSocket());
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return s;
    }

    private Socket[] pair(String kind) throws Exception {
        ServerSocket s = listen(kind);
        CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, threads);
        Socket c = socket(kind);
        c.connect(s.getLocalSocketAddress());
        Socket a = track(accepted.get(10, TimeUnit.SECONDS));
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
    void streamsEchoBytesIntactAndTheFieldsAreKept(String kind) throws Exception {
        Socket[] p = pair(kind);
        byte[] data = new byte[200_000];
        new SplittableRandom(5).nextBytes(data);
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            try {
                InputStream in = p[1].getInputStream();
                OutputStream out = p[1].getOutputStream();
                byte[] buf = new byte[3_000];
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
        assertEquals(p[1].getLocalPort(), p[0].getPort());
        assertEquals(p[0].getLocalPort(), p[1].getPort());
        assertEquals(InetAddress.getLoopbackAddress(), p[0].getInetAddress());
        assertEquals(InetAddress.getLoopbackAddress(), p[1].getInetAddress());
        assertEquals(InetAddress.getLoopbackAddress(), p[0].getLocalAddress(), "SO_BINDADDR");
        assertNull(p[0].getChannel());
        if (kind.equals("jsdp")) {
            assertTrue(p[0].getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), p[0].getOption(SdpSocketOptions.TRANSPORT));
            assertTrue(p[1].getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void halfCloseGivesEofAndThePeerCanStillAnswer(String kind) throws Exception {
        Socket[] p = pair(kind);
        p[0].getOutputStream().write(new byte[] {1, 2, 3});
        p[0].shutdownOutput();
        assertTrue(p[0].isOutputShutdown());
        assertThrows(SocketException.class, p[0]::getOutputStream);
        InputStream in = p[1].getInputStream();
        assertArrayEquals(new byte[] {1, 2, 3}, readN(in, 3));
        assertEquals(-1, in.read());
        assertEquals(-1, in.read(), "EOF stays");
        p[1].getOutputStream().write(9);
        assertEquals(9, p[0].getInputStream().read());
        p[1].shutdownInput();
        assertEquals(-1, in.read());
        assertThrows(SocketException.class, p[1]::getInputStream);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void soTimeoutOnReadThrowsSocketTimeoutExceptionAndTheSocketStaysUsable(String kind) throws Exception {
        Socket[] p = pair(kind);
        p[0].setSoTimeout(200);
        InputStream in = p[0].getInputStream();
        long start = System.nanoTime();
        assertEquals("Read timed out", assertThrows(SocketTimeoutException.class, in::read).getMessage());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150));
        assertFalse(p[0].isClosed());
        p[1].getOutputStream().write(7);
        assertEquals(7, in.read());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void soTimeoutOnAcceptThrowsSocketTimeoutExceptionAndTheServerStaysUsable(String kind) throws Exception {
        ServerSocket s = listen(kind);
        s.setSoTimeout(200);
        assertEquals("Accept timed out", assertThrows(SocketTimeoutException.class, s::accept).getMessage());
        assertFalse(s.isClosed());
        Socket c = socket(kind);
        c.connect(s.getLocalSocketAddress());
        Socket a = track(s.accept());
        assertEquals(c.getLocalPort(), a.getPort());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closeFromAnotherThreadEndsABlockedReadWithSocketClosed(String kind) throws Exception {
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
        assertEquals(SocketException.class, thrown.get().getClass(), String.valueOf(thrown.get()));
        assertEquals("Socket closed", thrown.get().getMessage());
        assertEquals("Socket is closed", assertThrows(SocketException.class, p[0]::getInputStream).getMessage());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void closeFromAnotherThreadEndsABlockedAcceptWithSocketClosed(String kind) throws Exception {
        ServerSocket s = listen(kind);
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
        assertEquals(SocketException.class, thrown.get().getClass(), String.valueOf(thrown.get()));
        assertEquals("Socket closed", thrown.get().getMessage());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void interruptingAPlatformThreadDoesNotEndItsBlockedRead(String kind) throws Exception {
        Socket[] p = pair(kind);
        AtomicReference<Object> result = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        InputStream in = p[0].getInputStream();
        Thread reader = new Thread(() -> {
            try {
                result.set(in.read());
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            } catch (Throwable t) {
                result.set(t);
            }
        });
        reader.start();
        Thread.sleep(200);
        reader.interrupt();
        Thread.sleep(200);
        assertTrue(reader.isAlive(), "still reading");
        assertFalse(p[0].isClosed());
        p[1].getOutputStream().write(42);
        reader.join(5_000);
        assertEquals(42, result.get());
        assertTrue(stillInterrupted.get(), "the interrupt status is kept");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void interruptingAVirtualThreadsBlockedReadClosesTheSocket(String kind) throws Exception {
        assumeTrue(VirtualThreadsForTests.available(), VirtualThreadsForTests::skipReason);
        Socket[] p = pair(kind);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        InputStream in = p[0].getInputStream();
        Thread reader = VirtualThreadsForTests.start(() -> {
            try {
                in.read();
            } catch (Throwable t) {
                thrown.set(t);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        Thread.sleep(200);
        reader.interrupt();
        reader.join(5_000);
        assertEquals(SocketException.class, thrown.get().getClass(), String.valueOf(thrown.get()));
        assertEquals("Closed by interrupt", thrown.get().getMessage());
        assertTrue(stillInterrupted.get());
        assertTrue(p[0].isClosed());
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void connectingWhereNobodyListensIsRefused(String kind) throws Exception {
        InetSocketAddress nobody;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            nobody = (InetSocketAddress) s.getLocalSocketAddress();
        }
        Socket c = socket(kind);
        assertThrows(ConnectException.class, () -> c.connect(nobody));
        Socket timed = socket(kind);
        assertThrows(ConnectException.class, () -> timed.connect(nobody, 2_000));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void optionsAreHonouredOrRejected(String kind) throws Exception {
        Socket s = socket(kind);
        s.setTcpNoDelay(true);
        assertTrue(s.getTcpNoDelay());
        s.setKeepAlive(true);
        assertTrue(s.getKeepAlive());
        s.setSoLinger(true, 3);
        assertEquals(3, s.getSoLinger());
        s.setSoLinger(false, 0);
        assertEquals(-1, s.getSoLinger());
        s.setSoTimeout(1234);
        assertEquals(1234, s.getSoTimeout());
        s.setReceiveBufferSize(65_536);
        assertTrue(s.getReceiveBufferSize() > 0);
        assertThrows(IllegalArgumentException.class, () -> s.setReceiveBufferSize(0));
        s.close();
        assertThrows(SocketException.class, () -> s.setTcpNoDelay(false));
    }

    @Test
    void aJsdpSocketFallsBackToTcpForAJdkServerAndSaysWhy() throws Exception {
        ServerSocket s = track(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
        Socket c = socket("jsdp");
        c.connect(s.getLocalSocketAddress());
        Socket a = track(s.accept());
        String t = c.getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(t.startsWith("tcp (no SDP listener at"), t);
        c.getOutputStream().write(5);
        assertEquals(5, a.getInputStream().read());
        a.getOutputStream().write(6);
        assertEquals(6, c.getInputStream().read());
        c.setSoTimeout(200);
        assertThrows(SocketTimeoutException.class, () -> c.getInputStream().read());
        assertFalse(c.isClosed());
    }

    @Test
    void aJdkSocketReachesAJsdpServerOverTcp() throws Exception {
        ServerSocket s = listen("jsdp");
        Socket c = socket("jdk");
        c.connect(s.getLocalSocketAddress());
        Socket a = track(s.accept());
        assertTrue(a.getOption(SdpSocketOptions.TRANSPORT).startsWith("tcp"));
        a.getOutputStream().write(8);
        assertEquals(8, c.getInputStream().read());
    }
}
