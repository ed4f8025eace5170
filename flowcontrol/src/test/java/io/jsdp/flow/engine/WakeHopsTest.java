package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.shm.ChildJvm;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.testbed.shm.ThreadSwitches;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 27: which threads a peer's write wakes. Round trips of 64 B between this JVM and a forked
 * {@link StreamPeer} echo, both blocking (spin window 0: every read parks), over the shared-memory
 * fabric; the context switches of every thread of both JVMs are read from
 * {@code /proc/<pid>/task/<tid>/status} before and after. A parked reader waits on its queue pair's
 * wake channel, which the peer's write rings itself: no thread of either process is on the path
 * but the two that carry the messages. (Before: the shm node thread took a doorbell frame and woke
 * the reader; before that, node thread, device progress thread and stack progress thread each
 * switched about once per message on each side.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WakeHopsTest {
    private static final int SIZE = 64;
    private static final int WARM_UP = 2_000;
    private static final int ROUND_TRIPS = 5_000;

    private SoftDevice device;
    private SdpStack stack;

    @BeforeEach
    void open() throws Exception {
        device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        stack = SdpStack.open(device);
    }

    @AfterEach
    void close() {
        try {
            stack.close();
        } finally {
            device.close();
        }
    }

    @Test
    void aParkedReaderIsWokenByThePeerWithNoThreadInBetween() throws Exception {
        String rendezvous = Rendezvous.defaultDirectory().toString();
        try (ChildJvm child = ChildJvm.start(StreamPeer.class, rendezvous, "listen", "echo", Integer.toString(SIZE), "1",
                "spin0")) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = stack.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
                StreamPeer.options("spin0"));
            assertTrue(c.awaitConnected(TimeUnit.SECONDS.toNanos(30)), () -> "connect: " + c.failureDetail());
            child.awaitLine("STREAMING", 30, TimeUnit.SECONDS);
            ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
            roundTrips(c, b, WARM_UP);
            long me = ProcessHandle.current().pid();
            long[] looksBefore = device.nodeThreadLooks();
            Map<String, Long> hereBefore = ThreadSwitches.of(me);
            Map<String, Long> thereBefore = ThreadSwitches.of(child.pid());
            roundTrips(c, b, ROUND_TRIPS);
            Map<String, Long> here = ThreadSwitches.delta(hereBefore, ThreadSwitches.of(me));
            Map<String, Long> there = ThreadSwitches.delta(thereBefore, ThreadSwitches.of(child.pid()));
            long[] looks = device.nodeThreadLooks();
            c.shutdownOutput();
            assertEquals("ECHOED " + (WARM_UP + ROUND_TRIPS), child.awaitLine("ECHOED", 30, TimeUnit.SECONDS));
            c.close();
            c.awaitReleased(TimeUnit.SECONDS.toNanos(10));
            String report = "context switches per thread over " + ROUND_TRIPS + " round trips\n  here:  " + here
                + "\n  there: " + there + "\n  node thread's looks here: at the named queue pair " + (looks[0] - looksBefore[0])
                + ", at all " + (looks[1] - looksBefore[1]);
            System.out.println(report);
            // /proc names the JVM's main thread after the process ("java"): that is the test's thread
            assertTrue(ThreadSwitches.sum(here, "java/") >= ROUND_TRIPS / 2,
                "the reading thread here parks on its reads (spin window 0): " + report);
            // one hop: the peer's write wakes the reader through its queue pair's wake channel; jsdp's
            // own threads (node, device and stack progress, timer, connection manager) run only for
            // their timers, on both sides
            long limit = ROUND_TRIPS / 20;
            assertTrue(ThreadSwitches.sum(here, "jsdp-") <= limit, "jsdp's threads here stay off the path: " + report);
            assertTrue(ThreadSwitches.sum(there, "jsdp-") <= limit, "jsdp's threads there stay off the path: " + report);
            // and the reader is woken once per round trip, not also by the acknowledgement of its write
            assertTrue(ThreadSwitches.sum(here, "java/") <= ROUND_TRIPS * 3 / 2,
                "the reader here wakes once a round trip: " + report);
            assertEquals(0, looks[0] - looksBefore[0] + looks[1] - looksBefore[1] > limit ? 1 : 0,
                "the node thread here looks at queue pairs only for timers: " + report);
        }
    }

    private static void roundTrips(SdpConnection c, ByteBuffer b, int n) throws IOException, InterruptedException {
        for (int i = 0; i < n; i++) {
            b.clear();
            Blocking.writeFully(c, b);
            b.clear();
            Blocking.readFully(c, b);
        }
    }
}
