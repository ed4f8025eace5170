package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
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
 * Issue 29: a thread blocked in {@code read} or {@code write} and stopped by an interrupt or by a close
 * from another thread ends as with the JDK's channels, the baseline each case runs over first: an
 * interrupt throws {@link ClosedByInterruptException}, keeps the thread's interrupt status and closes the
 * channel; a close throws {@link AsynchronousCloseException} and leaves the status clear. On platform
 * threads, and on virtual threads when the runtime has them. A case that does not end in time fails
 * with a dump of all threads (the lock cycle of the issue: close waiting for the write lock, the
 * interrupted writer waiting for the close).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockedChannelStopConformanceTest extends ConformanceBase {
    /** The blocked operation. */
    enum Op { READ, WRITE }

    /** What stops it. */
    enum Stop { INTERRUPT, CLOSE }

    /** The kind of the blocked thread. */
    enum Kind { PLATFORM, VIRTUAL }

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (String kind : List.of("jdk", "jsdp")) {
            for (Kind k : Kind.values()) {
                for (Op op : Op.values()) {
                    for (Stop stop : Stop.values()) {
                        all.add(Arguments.of(kind, k, op, stop));
                    }
                }
            }
        }
        return all.stream();
    }

    /** [client, accepted] over {@code p}, blocking. */
    static SocketChannel[] pair(SelectorProvider p, ServerSocketChannel s) throws Exception {
        CompletableFuture<SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        SocketChannel c = p.openSocketChannel();
        try {
            assertTrue(c.connect(s.getLocalAddress()));
            return new SocketChannel[] {c, accepted.get(10, TimeUnit.SECONDS)};
        } catch (Exception e) {
            c.close();
            throw e;
        }
    }

    /** A listener on the loopback address. */
    static ServerSocketChannel listen(SelectorProvider p) throws IOException {
        return p.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    }

    /** Starts {@code task} on a platform or a virtual thread. */
    static Thread start(Kind k, Runnable task) {
        if (k == Kind.VIRTUAL) {
            return VirtualThreadsForTests.start(task);
        }
        Thread t = new Thread(task, "blocked-op");
        t.setDaemon(true);
        t.start();
        return t;
    }

    @ParameterizedTest(name = "{0} {1} thread, {2} stopped by {3}")
    @MethodSource("cases")
    void blockedOperationEndsWithTheJdkExceptionAndChannelState(String kind, Kind k, Op op, Stop stop) throws Exception {
        assumeTrue(k == Kind.PLATFORM || VirtualThreadsForTests.available(), VirtualThreadsForTests::skipReason);
        SelectorProvider p = provider(kind);
        ServerSocketChannel s = track(listen(p));
        SocketChannel[] ends = pair(p, s);
        SocketChannel ch = track(ends[0]);
        track(ends[1]); // never reads: the writer fills its buffers and blocks
        if (kind.equals("jsdp")) {
            String transport = ch.getOption(SdpSocketOptions.TRANSPORT);
            assertTrue(transport.startsWith("sdp"), transport);
        }

        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
        AtomicLong written = new AtomicLong();
        CountDownLatch started = new CountDownLatch(1);
        Thread worker = start(k, () -> {
            started.countDown();
            try {
                if (op == Op.READ) {
                    ch.read(ByteBuffer.allocate(8));
                    thrown.set(new AssertionError("read returned"));
                } else {
                    ByteBuffer b = ByteBuffer.allocate(64 * 1024);
                    for (;;) {
                        b.clear();
                        written.addAndGet(ch.write(b));
                    }
                }
            } catch (Throwable t) {
                thrown.set(t);
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        awaitBlocked(op, written);

        // from another thread: the interrupter runs the close, and a close caught in a lock cycle must not
        // stop this thread from reporting the hang
        Thread stopper = new Thread(() -> {
            if (stop == Stop.INTERRUPT) {
                worker.interrupt();
            } else {
                try {
                    ch.close();
                } catch (IOException e) {
                    thrown.compareAndSet(null, e);
                }
            }
        }, "stopper");
        stopper.setDaemon(true);
        stopper.start();
        worker.join(10_000);
        stopper.join(1_000);
        if (worker.isAlive() || stopper.isAlive()) {
            fail(kind + ": the " + op + " did not end after " + stop + "\n" + ThreadDumps.all(worker));
        }

        Class<?> expected = stop == Stop.INTERRUPT ? ClosedByInterruptException.class : AsynchronousCloseException.class;
        assertNotNull(thrown.get(), "no exception");
        if (op == Op.WRITE && stop == Stop.CLOSE && thrown.get().getClass() == ClosedChannelException.class) {
            // as the JDK's: a blocked write that had written some bytes returns them, the next write finds it closed
            expected = ClosedChannelException.class;
        }
        assertEquals(expected, thrown.get().getClass(), () -> kind + ": " + thrown.get());
        assertEquals(stop == Stop.INTERRUPT, interruptedAfter.get(), "the thread's interrupt status");
        assertFalse(ch.isOpen(), "open");
        assertFalse(ch.isConnectionPending(), "connection pending");
        assertTrue(ch.isBlocking(), "blocking");
    }

    /** Waits until a reader is parked, or until a writer's count stopped growing (the peer's buffers are full). */
    static void awaitBlocked(Op op, AtomicLong written) throws InterruptedException {
        if (op == Op.READ) {
            Thread.sleep(200);
            return;
        }
        long last = -1;
        long stableSince = System.nanoTime();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() - stableSince < TimeUnit.MILLISECONDS.toNanos(300)) {
            assertTrue(System.nanoTime() < deadline, "the writer never blocked");
            long now = written.get();
            if (now != last) {
                last = now;
                stableSince = System.nanoTime();
            }
            Thread.sleep(20);
        }
    }
}
