package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import io.jsdp.testbed.shm.ThreadSwitches;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 27, item 6: a peer's write wakes the waiting thread itself. 5,000 round trips of 64 bytes
 * (10,000 messages) between this JVM and a {@link ConformancePeer} echoing in a forked JVM (blocking,
 * parking at once: {@code jsdp.spinNs=0}); every thread's context switches in both JVMs are read from
 * {@code /proc/<pid>/task/<tid>/status} before and after. Besides the two threads that carry the
 * messages (here the waiting reader or selector, there the echo), jsdp's threads — the shm node
 * thread, the device's and the stack's progress threads, the timer, the connection manager — may
 * run only for their timers: at most one switch per 20 round trips on either side. Separately for a
 * platform thread blocked in {@code read}, a selector blocked in {@code select} (with a JDK pipe in
 * the same selector), and a virtual thread in {@code read}, which parks and is unparked by the node
 * thread that took the doorbell from the kernel (as the JDK's poller thread unparks it for its own
 * sockets: a selection would hold its carrier) — that path is not one hop yet (see its bounds).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OneHopWakeTest {
    private static final int SIZE = 64;
    private static final int WARM_UP = 2_000;
    private static final int ROUND_TRIPS = 5_000;
    /** Switches of jsdp's own threads allowed per side over the run: one per 20 round trips. */
    private static final long SERVICE_LIMIT = ROUND_TRIPS / 20;

    private static final SdpSelectorProvider JSDP = new SdpSelectorProvider();
    private PeerJvm peer;
    private SocketChannel channel;

    @BeforeEach
    void connect() throws Exception {
        peer = new PeerJvm("jsdp", List.of("-Djsdp.spinNs=0"));
        int port = Integer.parseInt(peer.call("LISTEN"));
        peer.send("ACCEPT");
        channel = JSDP.openSocketChannel();
        channel.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        String transport = peer.answer("ACCEPT");
        assertTrue(channel.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), channel.getOption(SdpSocketOptions.TRANSPORT));
        assertTrue(transport.startsWith("sdp"), transport);
        peer.send("ECHO 0 " + (long) SIZE * (WARM_UP + ROUND_TRIPS));
    }

    @AfterEach
    void close() throws Exception {
        if (channel != null) {
            channel.close();
        }
        if (peer != null) {
            peer.close();
        }
    }

    @Test
    void aPlatformThreadInReadIsWokenByThePeerItself() throws Exception {
        Switches d = measure(true, this::blockingRoundTrips);
        assertOneHop("platform thread in read", "hop-reader", d, false);
    }

    @Test
    void aSelectorInSelectIsWokenByThePeerItself() throws Exception {
        channel.configureBlocking(false);
        java.nio.channels.Pipe pipe = JSDP.openPipe();
        try (Selector sel = JSDP.openSelector(); var source = pipe.source(); var sink = pipe.sink()) {
            assertTrue(sink.isOpen()); // idle: the wake-up pipe of an event loop nobody wakes
            source.configureBlocking(false);
            source.register(sel, SelectionKey.OP_READ); // an event loop's wake-up pipe: JDK and jsdp channels together
            SelectionKey key = channel.register(sel, SelectionKey.OP_READ);
            Switches d = measure(true, n -> selectorRoundTrips(sel, key, n));
            assertOneHop("selector in select", "hop-reader", d, false);
        }
    }

    @Test
    void aVirtualThreadInReadIsUnparkedByTheNodeThreadAlone() throws Exception {
        assumeTrue(VirtualThreadsForTests.available(), VirtualThreadsForTests.skipReason());
        Switches d = measure(false, this::blockingRoundTrips);
        assertOneHop("virtual thread in read", "ForkJoinPool-", d, true);
    }

    private interface RoundTrips {
        void run(int n) throws Exception;
    }

    /** The context switches by thread over the measured round trips, here and in the peer. */
    private record Switches(Map<String, Long> here, Map<String, Long> there) {
    }

    /** Warm-up, then the measured round trips in a thread named hop-reader (or a virtual thread). */
    private Switches measure(boolean platform, RoundTrips rt) throws Exception {
        AtomicReference<Switches> out = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Runnable body = () -> {
            try {
                rt.run(WARM_UP);
                long me = ProcessHandle.current().pid();
                long there = peer.pid();
                Map<String, Long> hereBefore = ThreadSwitches.of(me);
                Map<String, Long> thereBefore = ThreadSwitches.of(there);
                rt.run(ROUND_TRIPS);
                out.set(new Switches(ThreadSwitches.delta(hereBefore, ThreadSwitches.of(me)),
                    ThreadSwitches.delta(thereBefore, ThreadSwitches.of(there))));
            } catch (Throwable t) {
                failed.set(t);
            }
        };
        Thread t = platform ? new Thread(body, "hop-reader") : VirtualThreadsForTests.start(body);
        if (platform) {
            t.start();
        }
        t.join(TimeUnit.SECONDS.toMillis(100));
        if (failed.get() != null) {
            throw new AssertionError("round trips failed", failed.get());
        }
        assertEquals(Long.toString((long) SIZE * (WARM_UP + ROUND_TRIPS)), peer.answer("ECHO"));
        return out.get();
    }

    private void blockingRoundTrips(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
        for (int i = 0; i < n; i++) {
            b.clear();
            while (b.hasRemaining()) {
                channel.write(b);
            }
            b.clear();
            while (b.hasRemaining()) {
                if (channel.read(b) < 0) {
                    throw new IOException("EOF after " + i + " round trips");
                }
            }
        }
    }

    private void selectorRoundTrips(Selector sel, SelectionKey key, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
        for (int i = 0; i < n; i++) {
            b.clear();
            while (b.hasRemaining()) {
                if (channel.write(b) == 0) {
                    throw new IOException("a 64-byte write found no room");
                }
            }
            b.clear();
            while (b.hasRemaining()) {
                sel.select();
                sel.selectedKeys().clear();
                if (key.isReadable() && channel.read(b) < 0) {
                    throw new IOException("EOF after " + i + " round trips");
                }
            }
        }
    }

    private static void assertOneHop(String what, String waiter, Switches d, boolean nodeThreadWakes) {
        Map<String, Long> here = d.here();
        Map<String, Long> there = d.there();
        String report = what + ": context switches per thread over " + ROUND_TRIPS + " round trips\n  here:  " + here
            + "\n  there: " + there;
        System.out.println(report);
        // the waiter does wait: it is woken about once per round trip (it never spins: the peer parks)
        assertTrue(ThreadSwitches.sum(here, waiter) >= ROUND_TRIPS / 4, "the waiter here blocks: " + report);
        // /proc names the JVM's main thread after the process ("java"): the peer's echo
        assertTrue(ThreadSwitches.sum(there, "java/") >= ROUND_TRIPS / 4, "the echo there blocks: " + report);
        long nodeHere = ThreadSwitches.sum(here, "jsdp-shm-node");
        long serviceHere = ThreadSwitches.sum(here, "jsdp-") - nodeHere;
        if (nodeThreadWakes) {
            // the node thread takes the doorbell and unparks the virtual thread (the JDK's poller's part
            // for its own sockets). Not one hop yet: the acknowledgements of the virtual thread's writes
            // ring the node thread too, which then finds the queue pair locked by the running virtual
            // thread and leaves it to the device's progress thread (0.15-0.3 switches a round trip
            // measured); before the node thread served doorbells, that thread switched 1.2 times a
            // round trip and the stack's progress thread once
            assertTrue(nodeHere <= 3L * ROUND_TRIPS / 2, "the node thread here wakes the virtual thread, once a message: " + report);
            assertTrue(serviceHere <= ROUND_TRIPS / 2, "jsdp's other threads here stay mostly off the path: " + report);
        } else {
            assertTrue(nodeHere <= SERVICE_LIMIT, "the node thread here stays off the path: " + report);
            assertTrue(serviceHere <= SERVICE_LIMIT, "jsdp's other threads here stay off the path: " + report);
        }
        assertTrue(ThreadSwitches.sum(there, "jsdp-") <= SERVICE_LIMIT, "jsdp's threads there stay off the path: " + report);
    }
}
