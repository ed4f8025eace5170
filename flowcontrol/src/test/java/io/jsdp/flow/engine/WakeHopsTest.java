package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.shm.ChildJvm;
import io.jsdp.testbed.shm.Rendezvous;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 27: which threads a peer's write wakes. Round trips of 64 B between this JVM and a forked
 * {@link StreamPeer} echo, both blocking (spin window 0: every read parks), over the shared-memory
 * fabric; the context switches of every thread of both JVMs are read from
 * {@code /proc/<pid>/task/<tid>/status} before and after. The stack's progress thread must not be on
 * the path: a peer's doorbell is served on the shm node thread, whose completion events go straight
 * to the connection, which wakes the parked reader; the node thread re-arms the device's doorbell
 * itself, so the device's progress thread is not woken either. Before that, each message went from
 * the node thread to the device's progress thread to the stack's progress thread to the reader, and
 * each of those threads switched about once per message on each side.
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
    void aParkedReaderIsWokenWithoutTheStackProgressThreadOnEitherSide() throws Exception {
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
            Map<String, Long> hereBefore = switchesByThread(me);
            Map<String, Long> thereBefore = switchesByThread(child.pid());
            roundTrips(c, b, ROUND_TRIPS);
            Map<String, Long> here = delta(hereBefore, switchesByThread(me));
            Map<String, Long> there = delta(thereBefore, switchesByThread(child.pid()));
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
            assertTrue(sum(here, "java/") >= ROUND_TRIPS / 2,
                "the reading thread here parks on its reads (spin window 0): " + report);
            long limit = ROUND_TRIPS / 20;
            assertTrue(sum(here, "jsdp-progress-") <= limit, "the stack's progress thread here stays off the path: " + report);
            assertTrue(sum(there, "jsdp-progress-") <= limit, "the stack's progress thread there stays off the path: " + report);
            // the device's progress thread ("jsdp-soft<n>-progress", cut to 15 characters by /proc): the
            // node thread re-arms the doorbell for it; it wakes for its timers and what the node thread
            // leaves it (about 0.15 per round trip), not after every doorbell (1.2 per round trip before)
            long deviceLimit = ROUND_TRIPS / 4;
            assertTrue(sum(here, "jsdp-soft") <= deviceLimit, "the device's progress thread here stays off the path: " + report);
            assertTrue(sum(there, "jsdp-soft") <= deviceLimit, "the device's progress thread there stays off the path: " + report);
            // the stack's timer thread: the idle check backs off while the reader keeps parking with
            // the queue armed (it ran about once per 5 round trips when every parked message restarted it)
            assertTrue(sum(here, "jsdp-timer-") <= limit, "the stack's timer thread here stays off the path: " + report);
            assertTrue(sum(there, "jsdp-timer-") <= limit, "the stack's timer thread there stays off the path: " + report);
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

    /** Voluntary plus involuntary context switches of every thread of {@code pid}, by "name/tid". */
    static Map<String, Long> switchesByThread(long pid) throws IOException {
        Map<String, Long> out = new TreeMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : tasks) {
                String name = null;
                long switches = 0;
                try {
                    for (String l : Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("Name:")) {
                            name = l.substring(5).trim();
                        } else if (l.startsWith("voluntary_ctxt_switches:") || l.startsWith("nonvoluntary_ctxt_switches:")) {
                            switches += Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                out.put(name + "/" + t.getFileName(), switches);
            }
        }
        return out;
    }

    /** What moved between two readings; threads that did not switch are left out. */
    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d > 0) {
                out.put(k, d);
            }
        });
        return out;
    }

    private static long sum(Map<String, Long> m, String prefix) {
        return m.entrySet().stream().filter(e -> e.getKey().startsWith(prefix)).mapToLong(Map.Entry::getValue).sum();
    }
}
