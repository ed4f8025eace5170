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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30: a peer process stopped (SIGSTOP) and continued later keeps its connections, as TCP's do, and
 * nobody else stalls meanwhile. Two forked {@link StreamPeer} echoes; one is stopped while a round trip
 * to it is under way and round trips to the other go on; after SIGCONT the stopped one's echo arrives
 * and its connection carries on. The stop lasts {@code stoppedPeer.stopMs} (3 s here; the issue's
 * figure is 10 s: {@code -DstoppedPeer.stopMs=10000}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StoppedPeerTest {
    private static final int SIZE = 64;
    private static final long STOP_MS = Long.getLong("stoppedPeer.stopMs", 3_000);

    private SdpStack stack;

    @BeforeEach
    void open() throws Exception {
        stack = SdpStack.openOwning(SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST));
    }

    @AfterEach
    void close() {
        stack.close(); // and its device
    }

    private SdpConnection connect(ChildJvm child) throws Exception {
        int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
        SdpConnection c = stack.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), new SdpOptions());
        assertTrue(c.awaitConnected(TimeUnit.SECONDS.toNanos(30)), () -> "connect: " + c.failureDetail());
        child.awaitLine("STREAMING", 30, TimeUnit.SECONDS);
        return c;
    }

    private static void signal(String sig, long pid) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "kill -" + sig + " " + pid);
    }

    private static long roundTrip(SdpConnection c, ByteBuffer b) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        b.clear();
        Blocking.writeFully(c, b);
        b.clear();
        Blocking.readFully(c, b);
        return System.nanoTime() - t0;
    }

    @Test
    void aPeerStoppedForSecondsKeepsItsConnectionAndNobodyElseStalls() throws Exception {
        String rendezvous = Rendezvous.defaultDirectory().toString();
        try (ChildJvm stopped = ChildJvm.start(StreamPeer.class, rendezvous, "listen", "echo", Integer.toString(SIZE), "1",
                 "default");
             ChildJvm other = ChildJvm.start(StreamPeer.class, rendezvous, "listen", "echo", Integer.toString(SIZE), "2",
                 "default")) {
            SdpConnection toStopped = connect(stopped);
            SdpConnection toOther = connect(other);
            ByteBuffer a = ByteBuffer.allocateDirect(SIZE);
            ByteBuffer b = ByteBuffer.allocateDirect(SIZE);
            for (int i = 0; i < 200; i++) {
                roundTrip(toStopped, a);
                roundTrip(toOther, b);
            }
            signal("STOP", stopped.pid());
            long stoppedAt = System.nanoTime();
            // a message to the stopped peer: it fits the send buffer; its echo waits for SIGCONT
            a.clear();
            Blocking.writeFully(toStopped, a);
            long slowest = 0;
            int meanwhile = 0;
            while (System.nanoTime() - stoppedAt < TimeUnit.MILLISECONDS.toNanos(STOP_MS)) {
                slowest = Math.max(slowest, roundTrip(toOther, b));
                meanwhile++;
            }
            signal("CONT", stopped.pid());
            assertTrue(meanwhile > 100 && slowest < TimeUnit.SECONDS.toNanos(1), "round trips to the other peer went on "
                + "while one was stopped: " + meanwhile + ", the slowest " + TimeUnit.NANOSECONDS.toMillis(slowest) + " ms");
            a.clear();
            Blocking.readFully(toStopped, a); // the echo of the message written during the stop
            for (int i = 0; i < 200; i++) {
                roundTrip(toStopped, a);
                roundTrip(toOther, b);
            }
            assertTrue(toStopped.failure() == null, () -> "the stopped peer's connection: " + toStopped.failureDetail());
            toStopped.shutdownOutput();
            toOther.shutdownOutput();
            assertEquals("ECHOED " + 401, stopped.awaitLine("ECHOED", 30, TimeUnit.SECONDS));
            assertEquals("ECHOED " + (400 + meanwhile), other.awaitLine("ECHOED", 30, TimeUnit.SECONDS));
            toStopped.close();
            toOther.close();
            toStopped.awaitReleased(TimeUnit.SECONDS.toNanos(10));
            toOther.awaitReleased(TimeUnit.SECONDS.toNanos(10));
        }
    }
}
