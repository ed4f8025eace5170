package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.SdpSocketOptions;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Kind;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Op;
import java.io.IOException;
import java.nio.ByteBuffer;
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
 * what it returned) and the state it left (channel open, halves shut, the thread's interrupt status).
 * A {@code read} racing {@code shutdownInput}, a {@code write} racing {@code shutdownOutput}, and an
 * {@code accept} stopped by an interrupt or by a close; on platform threads, and on virtual threads
 * when the runtime has them. The JDK's outcome is observed, not written down here, so the test follows
 * the JDK it runs on. A case that does not end in time fails with a dump of all threads.
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
            all.add(Arguments.of(k, "accept", Race.INTERRUPT));
            all.add(Arguments.of(k, "accept", Race.CLOSE));
        }
        return all.stream();
    }

    /**
     * How a blocked call ended and what it left behind.
     *
     * @param ended the exception's class name, or "returned" and the value for a read
     * @param open whether the channel is still open
     * @param inputShut the socket's input shut down (false for a listener)
     * @param outputShut the socket's output shut down (false for a listener)
     * @param interrupted the thread's interrupt status after the call
     */
    record Outcome(String ended, boolean open, boolean inputShut, boolean outputShut, boolean interrupted) {
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
        Outcome jdk = run("jdk", k, call, race);
        Outcome jsdp = run("jsdp", k, call, race);
        assertEquals(jdk, jsdp, "jsdp against the JDK's channels");
    }

    private Outcome run(String kind, Kind k, String call, Race race) throws Exception {
        SelectorProvider p = provider(kind);
        ServerSocketChannel s = track(BlockedChannelStopConformanceTest.listen(p));
        SocketChannel ch = null;
        if (!call.equals("accept")) {
            SocketChannel[] ends = BlockedChannelStopConformanceTest.pair(p, s);
            ch = track(ends[0]);
            track(ends[1]); // never reads: the writer fills its buffers and blocks
            if (kind.equals("jsdp")) {
                String transport = ch.getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(transport.startsWith("sdp"), transport); // a fallback to TCP must not pass
            }
        }
        if (call.equals("write")) {
            fill(ch);
        }
        SocketChannel c = ch;
        AtomicReference<String> ended = new AtomicReference<>();
        AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread worker = BlockedChannelStopConformanceTest.start(k, () -> {
            started.countDown();
            try {
                switch (call) {
                    case "read":
                        ended.set("returned " + c.read(ByteBuffer.allocate(8)));
                        break;
                    case "write":
                        // one byte into full buffers: the call blocks having written nothing, so how it ends
                        // does not depend on how much of a larger buffer went out before it blocked
                        ended.set("returned " + c.write(ByteBuffer.allocate(1)));
                        break;
                    default:
                        SocketChannel a = s.accept();
                        ended.set("accepted " + (a != null));
                        break;
                }
            } catch (Throwable t) {
                ended.set(t.getClass().getName());
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        BlockedChannelStopConformanceTest.awaitBlocked(Op.READ, null);

        AtomicReference<Throwable> raceFailed = new AtomicReference<>();
        Thread racer = new Thread(() -> {
            try {
                switch (race) {
                    case SHUTDOWN:
                        if (call.equals("read")) {
                            c.shutdownInput();
                        } else {
                            c.shutdownOutput();
                        }
                        break;
                    case INTERRUPT:
                        worker.interrupt();
                        break;
                    default:
                        s.close();
                        break;
                }
            } catch (IOException e) {
                raceFailed.set(e);
            }
        }, "racer");
        racer.setDaemon(true);
        racer.start();
        worker.join(10_000);
        racer.join(1_000);
        if (worker.isAlive() || racer.isAlive()) {
            fail(kind + ": the " + call + " did not end after " + race + "\n" + ThreadDumps.all(worker));
        }
        if (raceFailed.get() != null) {
            throw new AssertionError(kind + ": the " + race + " failed", raceFailed.get());
        }
        if (c == null) {
            return new Outcome(ended.get(), s.isOpen(), false, false, interruptedAfter.get());
        }
        return new Outcome(ended.get(), c.isOpen(), c.isOpen() && c.socket().isInputShutdown(),
            c.isOpen() && c.socket().isOutputShutdown(), interruptedAfter.get());
    }
}
