package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.shm.ChildJvm;
import io.jsdp.testbed.shm.Rendezvous;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 9, acceptance 1 for SinkAvail across two JVMs: this JVM and a forked {@link ZeroCopyPeer}, each
 * with zero copy on a host-fabric SoftRdma device, run the SinkAvail workload both ways (the source
 * RDMA-writes into the sink's device memory through shared memory; read timeouts withdraw advertised
 * buffers at random), every byte checked; a peer killed while our reader's buffer is advertised, or
 * while its own is and we write into it, ends the connection here without a hang, and no registration
 * is left on either side.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrossProcessSinkAvailTest {
    static final int THRESHOLD = 64 * 1024;
    static final int WRITES = 150;
    static final long SRC_AVAIL_MS = 20;

    private SoftDevice device;
    private SdpStack stack;
    private ZeroCopy zc;
    private String rendezvous;

    @BeforeEach
    void open() throws Exception {
        device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        stack = SdpStack.open(device);
        zc = ZeroCopy.install(stack, ZeroCopySettings.fromSystemProperties().withTimeoutsMs(SRC_AVAIL_MS, 10_000, 10_000));
        rendezvous = Rendezvous.defaultDirectory().toString();
    }

    @AfterEach
    void close() {
        try {
            stack.close();
            assertEquals(0, zc.registrations(), zc.describe());
            String leaks = device.resources().checkLeaks();
            assertTrue(leaks == null || leaks.isEmpty(), leaks);
        } finally {
            device.close();
        }
    }

    private SdpConnection connect(int port) throws Exception {
        SdpConnection c = stack.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
            new SdpOptions().zcopyThreshold(THRESHOLD));
        assertTrue(c.awaitConnected(TimeUnit.SECONDS.toNanos(30)), c.failureDetail());
        return c;
    }

    @Test
    void rdmaWritesFromThisJvmLandIntactInThePeersAdvertisedBuffers() throws Exception {
        long seed = ZeroCopyIntegrityTest.seed();
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "readsink", "0", Long.toString(seed + 1),
                Integer.toString(THRESHOLD), Long.toString(SRC_AVAIL_MS))) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("STREAMING", 30, TimeUnit.SECONDS);
            long wrote = Workload.write(c, zc, THRESHOLD, WRITES, seed, 4);
            String[] read = child.awaitLine("READ", 90, TimeUnit.SECONDS).split(" ");
            assertEquals(wrote, Long.parseLong(read[1]), "seed " + seed + ": bytes read in the peer");
            assertTrue(ZeroCopyPeer.sinkWrites(c.snapshot()) > 0, "seed " + seed + ": no RDMA WRITE: " + c.snapshot());
            c.close();
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(10)), c::snapshot);
            assertEquals("RELEASED true", child.awaitLine("RELEASED", 30, TimeUnit.SECONDS));
            assertEquals("LEAKS none", child.awaitLine("LEAKS", 30, TimeUnit.SECONDS));
            child.awaitLine("DONE", 30, TimeUnit.SECONDS);
        }
    }

    @Test
    void rdmaWritesFromThePeerJvmLandIntactInOurAdvertisedBuffers() throws Exception {
        long seed = ZeroCopyIntegrityTest.seed();
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "writepaused", Integer.toString(WRITES),
                Long.toString(seed), Integer.toString(THRESHOLD), Long.toString(SRC_AVAIL_MS))) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("STREAMING", 30, TimeUnit.SECONDS);
            long[] read = Workload.readSink(c, zc, THRESHOLD, seed + 1);
            String[] wrote = child.awaitLine("WROTE", 90, TimeUnit.SECONDS).split(" ");
            assertEquals(Long.parseLong(wrote[1]), read[0], "seed " + seed + ": bytes read here");
            assertTrue(Long.parseLong(wrote[3]) > 0, "seed " + seed + ": the peer RDMA-wrote into our buffers: " + c.snapshot());
            assertEquals(0, zc.cacheStats().inUse(), zc.describe());
            c.close();
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(10)), c::snapshot);
            assertEquals("RELEASED true", child.awaitLine("RELEASED", 30, TimeUnit.SECONDS));
            assertEquals("LEAKS none", child.awaitLine("LEAKS", 30, TimeUnit.SECONDS));
            child.awaitLine("DONE", 30, TimeUnit.SECONDS);
        }
    }

    @Test
    void peerKilledWhileOurReadBufferIsAdvertisedEndsTheReadAndFreesIt() throws Exception {
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "sinkhold", "0", "1",
                Integer.toString(THRESHOLD), "60000")) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("READING", 30, TimeUnit.SECONDS); // the peer writes nothing: it reads too
            ByteBuffer dst = zc.allocateDirect(8 << 20);
            Future<Integer> r = TestThreads.POOL.submit(() -> {
                try {
                    return Zio.readHolding(c, dst, TimeUnit.SECONDS.toNanos(20));
                } catch (IOException e) {
                    return SdpConnection.FAILED;
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!c.snapshot().contains("sinkAvail reader ADVERTISED") && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertTrue(c.snapshot().contains("sinkAvail reader ADVERTISED"), c.snapshot());
            child.kill();
            int n = r.get(30, TimeUnit.SECONDS);
            assertTrue(n == SdpConnection.FAILED || n == SdpConnection.EOF, "ended " + n + ": " + c.snapshot());
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(10)), c::snapshot);
            assertEquals(0, zc.cacheStats().inUse(), zc.describe());
        }
    }

    @Test
    void peerKilledWithItsBufferAdvertisedFailsOurWriteWithoutAHang() throws Exception {
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "sinkhold", "0", "1",
                Integer.toString(THRESHOLD), "60000")) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("READING", 30, TimeUnit.SECONDS);
            ByteBuffer src = ByteBuffer.allocateDirect(8 << 20);
            Zio.fill(src, 0, src.capacity(), 0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!c.snapshot().contains("peerAdverts=1") && System.nanoTime() < deadline) {
                c.available(); // takes what arrived
                Thread.sleep(1);
            }
            assertTrue(c.snapshot().contains("peerAdverts=1"), c.snapshot());
            child.kill();
            Thread.sleep(100);
            try {
                for (int i = 0; i < 20; i++) {
                    src.clear();
                    Zio.writeFully(c, src); // the first may land before the peer's death is seen
                }
                throw new AssertionError("writes to a killed peer kept succeeding: " + c.snapshot());
            } catch (IOException expected) {
                // reset or peer gone
            }
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(20)), c::snapshot);
            assertEquals(0, zc.cacheStats().inUse(), zc.describe());
        }
    }
}
