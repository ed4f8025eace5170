package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.SdpSocketOptions;
import io.jsdp.flow.engine.SpinGovernor;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Kind;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Op;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.SoftFaults;
import io.jsdp.testbed.shm.ChildJvm;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 29: a blocked call and what another thread does meanwhile, run over the JDK's channels first
 * and then over jsdp's, each case ending as the JDK's did: how the call ended (its exception's type, or
 * what it returned) and the state it left (channel or selector open, connect pending, halves shut, the
 * thread's interrupt status). A {@code read} racing {@code shutdownInput}, a {@code write} racing
 * {@code shutdownOutput}; an {@code accept}, a {@code connect} and a {@code select} stopped by an
 * interrupt or by a close; a {@code read} interrupted or closed while jsdp's thread spins
 * ({@link SdpSocketOptions#SPIN_NS}; in a child JVM, {@link SpinRaceChild}, whose spin governor lets it
 * spin) and a selection while jsdp's selector spins; on platform threads,
 * and on virtual threads when the runtime has them. The JDK's outcome is observed, not written down
 * here, so the test follows the JDK it runs on. A case that does not end in time fails with a dump of
 * all threads.
 *
 * <p>A connect blocks where TCP's does: towards a listener whose backlog is full (Linux drops the SYN).
 * jsdp's connect there is refused by the SDP listener and blocks in its TCP fallback
 * ({@code connect}); {@code connect-sdp} loses jsdp's connect request on the device instead
 * ({@link SoftFaults#dropConnectRequests}), so its connect waits in the SDP handshake. Each jsdp case
 * checks where the call waits (SDP connection, SDP handshake, spin loop, fallback), so a case cannot pass
 * on a path it does not name.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BlockedCallRaceConformanceTest extends ConformanceBase {
    /** The racing action. */
    enum Race { SHUTDOWN, INTERRUPT, CLOSE }

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (Kind k : Kind.values()) {
            all.add(Arguments.of(k, "read", Race.SHUTDOWN));
            all.add(Arguments.of(k, "write", Race.SHUTDOWN));
            for (String call : List.of("accept", "connect", "connect-sdp", "select", "select-spin", "read-spin")) {
                all.add(Arguments.of(k, call, Race.INTERRUPT));
                all.add(Arguments.of(k, call, Race.CLOSE));
            }
        }
        return all.stream();
    }

    /** The spin window of the spinning cases: far longer than a case, so the race meets the spin. */
    static final long LONG_SPIN_NS = TimeUnit.SECONDS.toNanos(8);

    /**
     * How a blocked call ended and what it left behind.
     *
     * @param ended the exception's class name, or "returned" and the value for a read
     * @param open whether the channel (for a selection: the selector) is still open
     * @param connected whether the channel says it is connected
     * @param pending whether a connect is still pending
     * @param inputShut the socket's input shut down (false for a listener)
     * @param outputShut the socket's output shut down (false for a listener)
     * @param interrupted the thread's interrupt status after the call
     */
    record Outcome(String ended, boolean open, boolean connected, boolean pending, boolean inputShut, boolean outputShut,
        boolean interrupted) {
    }

    /** Writes without blocking until the channel takes no more (its peer never reads), then blocks again. */
    static void fill(SocketChannel ch) throws IOException, InterruptedException {
        ch.configureBlocking(false);
        ByteBuffer b = ByteBuffer.allocate(64 * 1024);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (int zeros = 0; zeros < 3; ) {
            assertTrue(System.nanoTime() < deadline, "the buffers never filled");
            b.clear();
            if (ch.write(b) == 0) {
                zeros++;
                Thread.sleep(50); // what is in flight settles in the peer's buffers
            } else {
                zeros = 0;
            }
        }
        ch.configureBlocking(true);
    }

    @ParameterizedTest(name = "{0} thread, {1} raced by {2}")
    @MethodSource("cases")
    void aBlockedCallRacedByAnotherThreadEndsAsTheJdksDoes(Kind k, String call, Race race) throws Exception {
        assumeTrue(k == Kind.PLATFORM || VirtualThreadsForTests.available(), VirtualThreadsForTests::skipReason);
        if (call.equals("read-spin")) {
            // in a JVM of its own, whose spin governor lets every wait spin (jsdp.spin.adaptive=false): this
            // JVM's governor, adaptive, parks a wait as soon as it saw a foreign runnable thread lately
            try (ChildJvm child = ChildJvm.start(List.of("-Djsdp.spin.adaptive=false"), SpinRaceChild.class,
                k.name(), race.name())) {
                String jdk = child.awaitLine("jdk ", 60, TimeUnit.SECONDS);
                String jsdp = child.awaitLine("jsdp ", 60, TimeUnit.SECONDS);
                assertEquals(jdk.substring(4), jsdp.substring(5), "jsdp against the JDK's channels");
            }
            return;
        }
        Outcome jdk = run("jdk", k, call, race);
        Outcome jsdp = jsdpOutcome(k, call, race);
        assertEquals(jdk, jsdp, "jsdp against the JDK's channels");
    }

    /** The jsdp run of a case; a spinning case whose reader was not seen spinning tries a new connection. */
    Outcome jsdpOutcome(Kind k, String call, Race race) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return run("jsdp", k, call, race);
            } catch (NotSpinning e) {
                if (attempt == SPIN_ATTEMPTS) {
                    throw new AssertionError("the reader never spun in " + SPIN_ATTEMPTS + " attempts\n" + e.getMessage());
                }
                closeAll(); // the reader of this attempt ends with its channel
            }
        }
    }

    /** How soon after the race the call must have ended (the JDK's end at once; a spin lasts 8 s). */
    static final long ENDS_WITHIN_MS = 3_000;

    /** How many connections a spinning case tries before it fails: a spin the governor ended tries anew. */
    static final int SPIN_ATTEMPTS = 5;

    /** The reader of a spinning case was not seen spinning (the governor ended or refused its spin). */
    static final class NotSpinning extends Exception {
        private static final long serialVersionUID = 1L;

        NotSpinning(String dump) {
            super(dump, null, false, false);
        }
    }

    Outcome run(String kind, Kind k, String call, Race race) throws Exception {
        boolean jsdp = kind.equals("jsdp");
        SelectorProvider p = provider(kind);
        ServerSocketChannel s = track(call.startsWith("connect")
            ? p.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1)
            : BlockedChannelStopConformanceTest.listen(p));
        SocketChannel ch = null;
        Selector sel = null;
        SelectionKey key = null;
        SoftFaults faults = null;
        if (call.startsWith("connect")) {
            fillBacklog(this, p, s.getLocalAddress(), jsdp);
            ch = track(p.openSocketChannel());
            if (jsdp && call.equals("connect-sdp")) {
                faults = ((SoftDevice) SdpRuntime.stack().rdmaDevice()).faults();
                faults.dropConnectRequests(true);
            }
        } else if (!call.equals("accept")) {
            SocketChannel[] ends = BlockedChannelStopConformanceTest.pair(p, s);
            ch = track(ends[0]);
            track(ends[1]); // never reads: the writer fills its buffers and blocks
            if (jsdp) {
                String transport = ch.getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(transport.startsWith("sdp"), transport); // a fallback to TCP must not pass
                if (call.equals("read-spin")) {
                    ch.setOption(SdpSocketOptions.SPIN_NS, LONG_SPIN_NS);
                }
            }
        }
        if (call.equals("write")) {
            fill(ch);
        }
        if (call.startsWith("select")) {
            sel = track(jsdp && call.equals("select-spin")
                ? new HybridSelector(p, JDK.openSelector(), LONG_SPIN_NS, new SpinGovernor(false, 0, 2, () -> -1))
                : p.openSelector());
            ch.configureBlocking(false);
            key = ch.register(sel, SelectionKey.OP_READ); // nothing comes: the selection blocks
        }
        try {
            return race(kind, k, call, race, s, ch, sel, key);
        } finally {
            if (faults != null) {
                faults.dropConnectRequests(false);
            }
        }
    }

    private Outcome race(String kind, Kind k, String call, Race race, ServerSocketChannel s, SocketChannel c,
        Selector sel, SelectionKey key) throws Exception {
        SocketAddress to = s.getLocalAddress();
        AtomicReference<String> ended = new AtomicReference<>();
        AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread worker = BlockedChannelStopConformanceTest.start(k, () -> {
            started.countDown();
            try {
                switch (call) {
                    case "read", "read-spin" -> ended.set("returned " + c.read(ByteBuffer.allocate(8)));
                    // one byte into full buffers: the call blocks having written nothing, so how it ends
                    // does not depend on how much of a larger buffer went out before it blocked
                    case "write" -> ended.set("returned " + c.write(ByteBuffer.allocate(1)));
                    case "accept" -> ended.set("accepted " + (s.accept() != null));
                    case "connect", "connect-sdp" -> ended.set("connected " + c.connect(to));
                    default -> ended.set("selected " + sel.select());
                }
            } catch (Throwable t) {
                ended.set(t.getClass().getName());
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        String waitsIn = kind.equals("jsdp") ? waitsIn(call) : null;
        if (call.equals("read-spin") && waitsIn != null) {
            // the race comes as soon as the thread is seen spinning: the JVM's spin governor ends a spin
            // that finds its thread descheduled, and the thread then parks
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (!inStack(worker, waitsIn)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new NotSpinning(ThreadDumps.all(worker));
                }
                Thread.sleep(1);
            }
        } else {
            BlockedChannelStopConformanceTest.awaitBlocked(Op.READ, null);
            if (waitsIn != null && !inStack(worker, waitsIn)) {
                fail(kind + ": the " + call + " does not wait in " + waitsIn + "\n" + ThreadDumps.all(worker));
            }
        }

        AtomicReference<Throwable> raceFailed = new AtomicReference<>();
        Thread racer = new Thread(() -> {
            try {
                switch (race) {
                    case SHUTDOWN -> {
                        if (call.equals("read")) {
                            c.shutdownInput();
                        } else {
                            c.shutdownOutput();
                        }
                    }
                    case INTERRUPT -> worker.interrupt();
                    default -> {
                        if (sel != null) {
                            sel.close();
                        } else if (call.equals("accept")) {
                            s.close();
                        } else {
                            c.close();
                        }
                    }
                }
            } catch (IOException e) {
                raceFailed.set(e);
            }
        }, "racer");
        racer.setDaemon(true);
        long raced = System.nanoTime();
        racer.start();
        worker.join(10_000);
        racer.join(1_000);
        if (worker.isAlive() || racer.isAlive()) {
            fail(kind + ": the " + call + " did not end after " + race + "\n" + ThreadDumps.all(worker));
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - raced);
        // the JDK's calls end at once; a spin that outlasts the race (8 s) must not pass
        assertTrue(tookMs < ENDS_WITHIN_MS, () -> kind + ": the " + call + " ended " + tookMs + " ms after " + race);
        if (raceFailed.get() != null) {
            throw new AssertionError(kind + ": the " + race + " failed", raceFailed.get());
        }
        if (sel != null) {
            // the key once both ended: a selection the close woke returns before the close cancels the keys
            return new Outcome(ended.get() + ", key valid " + key.isValid(), sel.isOpen(), c.isConnected(), false, false,
                false, interruptedAfter.get());
        }
        if (c == null) {
            return new Outcome(ended.get(), s.isOpen(), false, false, false, false, interruptedAfter.get());
        }
        return new Outcome(ended.get(), c.isOpen(), c.isConnected(), c.isConnectionPending(),
            c.isOpen() && c.socket().isInputShutdown(), c.isOpen() && c.socket().isOutputShutdown(), interruptedAfter.get());
    }

    /** Where a jsdp call of this case must wait: a method on the blocked thread's stack, or null. */
    private static String waitsIn(String call) {
        return switch (call) {
            case "read", "write" -> "SdpConnection.await";
            case "read-spin" -> "SdpConnection.spinWait";
            case "connect" -> "SdpSocketChannel.startTcp";
            case "connect-sdp" -> "SdpConnection.awaitConnected";
            case "select-spin" -> "HybridSelector.spinLocked";
            case "select" -> "HybridSelector.doSelect";
            default -> null;
        };
    }

    /** Whether {@code method} ("Class.method") is on {@code t}'s stack. */
    private static boolean inStack(Thread t, String method) {
        for (StackTraceElement e : t.getStackTrace()) {
            String cls = e.getClassName();
            if ((cls.substring(cls.lastIndexOf('.') + 1) + "." + e.getMethodName()).equals(method)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Connects to {@code s} (backlog 1, never accepting) until a connect stays pending: its queue is then
     * full, and the next connect blocks as TCP's does. jsdp's first connections are on SDP.
     */
    static void fillBacklog(ConformanceBase owner, SelectorProvider p, SocketAddress at, boolean jsdp) throws Exception {
        for (int i = 0; i < 16; i++) {
            SocketChannel f = owner.track(p.openSocketChannel());
            f.configureBlocking(false);
            boolean done = f.connect(at);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (!done && System.nanoTime() - deadline < 0) {
                Thread.sleep(5);
                done = f.finishConnect();
            }
            if (!done) {
                f.close(); // pending: the queue is full
                return;
            }
            if (jsdp && i == 0) {
                String transport = f.getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(transport.startsWith("sdp"), transport);
            }
        }
        fail("the backlog never filled");
    }
}
