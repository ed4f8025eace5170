package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.SdpSocketOptions;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Kind;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Op;
import io.jsdp.provider.SocketImplConformanceTest.JsdpServerSocket;
import io.jsdp.provider.SocketImplConformanceTest.JsdpSocket;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 29, the {@code java.net} side: a {@code Socket} or {@code ServerSocket} blocked in {@code read},
 * {@code write}, {@code accept} or {@code connect} while another thread interrupts it, closes it or shuts
 * its half down, and {@code SO_TIMEOUT} running out, over the JDK's sockets first and then over jsdp's:
 * {@link SdpSocketImpl} ({@link JsdpSocket}, {@link JsdpServerSocket}) against the JDK's impl, and the
 * channels' socket adaptors against the JDK's; on platform threads and, when the runtime has them,
 * virtual threads. Each case ends as the JDK's did: the exception's type and message
 * (or what the call returned), the socket's state (closed, halves shut) and the thread's interrupt
 * status. A platform thread's socket call is not interruptible: a call still blocked a second after the
 * race is recorded as such and then ended by closing the socket, and how it ended then is compared too.
 * The connect blocks towards a full backlog, as TCP's does (jsdp's refused by the SDP listener, then in
 * its TCP fallback); jsdp's reads and writes are on SDP.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SocketCallRaceConformanceTest extends ConformanceBase {
    /** What another thread does. */
    enum Race { INTERRUPT, CLOSE, SHUTDOWN, TIMEOUT }

    /** How the sockets are made. */
    enum Api {
        /** {@code new Socket()}, {@code new ServerSocket()}: the JDK's impl, or {@link SdpSocketImpl}. */
        IMPL,
        /** {@code SocketChannel.socket()}, {@code ServerSocketChannel.socket()}: the channels' adaptors. */
        ADAPTOR
    }

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (Api api : Api.values()) {
            for (Kind k : Kind.values()) {
                for (String call : List.of("read", "write", "accept", "connect")) {
                    all.add(Arguments.of(api, k, call, Race.INTERRUPT));
                    all.add(Arguments.of(api, k, call, Race.CLOSE));
                }
                all.add(Arguments.of(api, k, "read", Race.SHUTDOWN));
                all.add(Arguments.of(api, k, "write", Race.SHUTDOWN));
                all.add(Arguments.of(api, k, "read", Race.TIMEOUT));
                all.add(Arguments.of(api, k, "accept", Race.TIMEOUT));
            }
        }
        return all.stream();
    }

    /**
     * How a blocked call ended and what it left behind.
     *
     * @param ended the exception's class and message, or what the call returned; "blocked, then ..." when
     *     the race did not end it and the close that followed did
     * @param closed whether the socket (the server socket for accept) is closed
     * @param connected whether the socket says it is connected (the server socket: bound)
     * @param inputShut the socket's input shut down
     * @param outputShut the socket's output shut down
     * @param interrupted the thread's interrupt status after the call
     */
    record Outcome(String ended, boolean closed, boolean connected, boolean inputShut, boolean outputShut,
        boolean interrupted) {
    }

    @ParameterizedTest(name = "{0}, {1} thread, {2} raced by {3}")
    @MethodSource("cases")
    void aBlockedSocketCallEndsAsTheJdksDoes(Api api, Kind k, String call, Race race) throws Exception {
        assumeTrue(k == Kind.PLATFORM || VirtualThreadsForTests.available(), VirtualThreadsForTests::skipReason);
        Outcome jdk = run(api, "jdk", k, call, race);
        Outcome jsdp = run(api, "jsdp", k, call, race);
        if (call.equals("write") && race == Race.CLOSE) {
            jdk = closedDuringWrite(jdk);
            jsdp = closedDuringWrite(jsdp);
        }
        assertEquals(jdk, jsdp, "jsdp against the JDK's sockets");
    }

    /**
     * A write loop closed by another thread ends in AsynchronousCloseException, or in ClosedChannelException
     * when the blocked write returned first: the JDK's adaptor on a virtual thread (JDK 25) reports the
     * blocked call complete although the close cut it short, and the loop's next call finds the channel
     * closed. jsdp does not claim bytes it did not send; both are the one outcome here.
     */
    private static Outcome closedDuringWrite(Outcome o) {
        String e = o.ended();
        if (e.startsWith("java.nio.channels.AsynchronousCloseException")
            || e.startsWith("java.nio.channels.ClosedChannelException")) {
            return new Outcome("closed during the write loop", o.closed(), o.connected(), o.inputShut(), o.outputShut(),
                o.interrupted());
        }
        return o;
    }

    private Socket socket(Api api, boolean jsdp) throws IOException {
        if (api == Api.ADAPTOR) {
            return track(provider(jsdp ? "jsdp" : "jdk").openSocketChannel().socket());
        }
        return track(jsdp ? new JsdpSocket() : new Socket());
    }

    private Outcome run(Api api, String kind, Kind k, String call, Race race) throws Exception {
        boolean jsdp = kind.equals("jsdp");
        ServerSocket s = track(api == Api.ADAPTOR ? provider(kind).openServerSocketChannel().socket()
            : jsdp ? new JsdpServerSocket() : new ServerSocket());
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), call.equals("connect") ? 1 : 50);
        Socket c = null;
        if (call.equals("connect")) {
            BlockedCallRaceConformanceTest.fillBacklog(this, provider(kind), s.getLocalSocketAddress(), jsdp);
            c = socket(api, jsdp);
        } else if (!call.equals("accept")) {
            Socket[] p = pair(api, jsdp, s);
            c = p[0];
            if (jsdp) {
                String transport = p[0].getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(transport.startsWith("sdp"), transport); // a fallback to TCP must not pass
            }
        }
        if (race == Race.TIMEOUT) {
            if (c != null) {
                c.setSoTimeout(300);
            } else {
                s.setSoTimeout(300);
            }
        }
        Socket sock = c;
        AtomicReference<String> ended = new AtomicReference<>();
        AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        AtomicLong written = new AtomicLong();
        CountDownLatch started = new CountDownLatch(1);
        Thread worker = BlockedChannelStopConformanceTest.start(k, () -> {
            started.countDown();
            try {
                switch (call) {
                    case "read" -> ended.set("returned " + sock.getInputStream().read());
                    case "write" -> {
                        OutputStream out = sock.getOutputStream();
                        byte[] b = new byte[64 * 1024];
                        for (;;) {
                            out.write(b);
                            written.addAndGet(b.length);
                        }
                    }
                    case "accept" -> {
                        Socket a = s.accept();
                        track(a);
                        ended.set("accepted " + (a != null));
                    }
                    default -> {
                        sock.connect(s.getLocalSocketAddress());
                        ended.set("connected");
                    }
                }
            } catch (Throwable t) {
                ended.set(t.getClass().getName() + ": " + t.getMessage());
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        if (race == Race.TIMEOUT) {
            worker.join(5_000);
            if (worker.isAlive()) {
                fail(kind + ": the " + call + " did not time out\n" + ThreadDumps.all(worker));
            }
            return outcome(ended.get(), s, c, interruptedAfter.get());
        }
        BlockedChannelStopConformanceTest.awaitBlocked(call.equals("write") ? Op.WRITE : Op.READ, written);

        AtomicReference<Throwable> raceFailed = new AtomicReference<>();
        Thread racer = new Thread(() -> {
            try {
                switch (race) {
                    case INTERRUPT -> worker.interrupt();
                    case SHUTDOWN -> {
                        if (call.equals("read")) {
                            sock.shutdownInput();
                        } else {
                            sock.shutdownOutput();
                        }
                    }
                    default -> {
                        if (call.equals("accept")) {
                            s.close();
                        } else {
                            sock.close();
                        }
                    }
                }
            } catch (IOException e) {
                raceFailed.set(e);
            }
        }, "racer");
        racer.setDaemon(true);
        racer.start();
        worker.join(1_000);
        racer.join(1_000);
        String prefix = "";
        if (worker.isAlive()) {
            // not interruptible (a platform thread's socket call), or not ended by a shutdown: a close ends it
            prefix = "blocked, then ";
            if (call.equals("accept")) {
                s.close();
            } else {
                sock.close();
            }
            worker.join(10_000);
        }
        if (worker.isAlive() || racer.isAlive()) {
            fail(kind + ": the " + call + " did not end after " + race + " and a close\n" + ThreadDumps.all(worker));
        }
        if (raceFailed.get() != null) {
            throw new AssertionError(kind + ": the " + race + " failed", raceFailed.get());
        }
        return outcome(prefix + ended.get(), s, c, interruptedAfter.get());
    }

    private static Outcome outcome(String ended, ServerSocket s, Socket c, boolean interrupted) {
        if (c == null) {
            return new Outcome(ended, s.isClosed(), s.isBound(), false, false, interrupted);
        }
        return new Outcome(ended, c.isClosed(), c.isConnected(), c.isInputShutdown(), c.isOutputShutdown(), interrupted);
    }

    /** [client, accepted], the accepted one never read from. */
    private Socket[] pair(Api api, boolean jsdp, ServerSocket s) throws Exception {
        CompletableFuture<Socket> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        Socket c = socket(api, jsdp);
        c.connect(s.getLocalSocketAddress());
        return new Socket[] {c, track(accepted.get(10, TimeUnit.SECONDS))};
    }
}
