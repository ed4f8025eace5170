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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 9, acceptance 1 across two JVMs: this JVM and a forked {@link ZeroCopyPeer}, each with zero copy
 * on a host-fabric SoftRdma device, run the {@link Workload} both ways (the sink RDMA-reads the
 * source's device memory through shared memory; refusals and source timeouts at random), every byte
 * checked; a peer killed with its advertisement outstanding fails the reader here, and no registration
 * is left on either side.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CrossProcessZeroCopyTest {
    static final int THRESHOLD = 64 * 1024;
    static final int WRITES = 200;
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
    void zeroCopyFromThisJvmArrivesIntactInThePeerJvm() throws Exception {
        long seed = ZeroCopyIntegrityTest.seed();
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "read", "0", Long.toString(seed + 1),
                Integer.toString(THRESHOLD), Long.toString(SRC_AVAIL_MS))) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("STREAMING", 30, TimeUnit.SECONDS);
            long wrote = Workload.write(c, zc, THRESHOLD, WRITES, seed);
            String[] read = child.awaitLine("READ", 90, TimeUnit.SECONDS).split(" ");
            assertEquals(wrote, Long.parseLong(read[1]), "seed " + seed + ": bytes read in the peer");
            assertTrue(c.stats().zeroCopyTransfers() > 0, "seed " + seed + ": " + c.snapshot());
            assertTrue(Long.parseLong(read[2]) > 0, "the peer RDMA-read our device memory");
            c.close();
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(10)), c::snapshot);
            assertEquals("RELEASED true", child.awaitLine("RELEASED", 30, TimeUnit.SECONDS));
            assertEquals("LEAKS none", child.awaitLine("LEAKS", 30, TimeUnit.SECONDS));
            child.awaitLine("DONE", 30, TimeUnit.SECONDS);
        }
    }

    @Test
    void zeroCopyFromThePeerJvmArrivesIntactHere() throws Exception {
        long seed = ZeroCopyIntegrityTest.seed();
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "write", Integer.toString(WRITES),
                Long.toString(seed), Integer.toString(THRESHOLD), Long.toString(SRC_AVAIL_MS))) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("STREAMING", 30, TimeUnit.SECONDS);
            long read = Workload.read(c, THRESHOLD, seed + 1);
            String[] wrote = child.awaitLine("WROTE", 90, TimeUnit.SECONDS).split(" ");
            assertEquals(Long.parseLong(wrote[1]), read, "seed " + seed + ": bytes read here");
            assertTrue(Long.parseLong(wrote[2]) > 0, "seed " + seed + ": the peer sent by zero copy");
            assertTrue(c.stats().zeroCopyBytes() > 0, "we RDMA-read the peer's device memory: " + c.snapshot());
            c.close();
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(10)), c::snapshot);
            assertEquals("RELEASED true", child.awaitLine("RELEASED", 30, TimeUnit.SECONDS));
            assertEquals("LEAKS none", child.awaitLine("LEAKS", 30, TimeUnit.SECONDS));
            child.awaitLine("DONE", 30, TimeUnit.SECONDS);
        }
    }

    @Test
    void peerKilledWithItsAdvertisementOutstandingFailsTheReaderHere() throws Exception {
        try (ChildJvm child = ChildJvm.start(ZeroCopyPeer.class, rendezvous, "listen", "hold", "0", "1",
                Integer.toString(THRESHOLD), "60000")) {
            int port = Integer.parseInt(child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ")[1]);
            SdpConnection c = connect(port);
            child.awaitLine("WRITING", 30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (c.available() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(1); // the SrcAvail arrived
            }
            ByteBuffer dst = ByteBuffer.allocateDirect(64 * 1024);
            Zio.readFully(c, dst); // inline bytes and the first READ
            Zio.check(dst, 0, dst.capacity(), 0);
            child.kill();
            ByteBuffer rest = ByteBuffer.allocateDirect(1 << 20);
            int n;
            long got = dst.capacity();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            do {
                rest.clear();
                try {
                    n = c.read(rest);
                } catch (RuntimeException e) {
                    throw new IOException(e);
                }
                if (n > 0) {
                    Zio.check(rest, 0, n, got);
                    got += n;
                } else if (n == 0) {
                    c.await(SdpConnection.OP_READ, TimeUnit.SECONDS.toNanos(1));
                }
                assertTrue(System.nanoTime() < end, "no end 20 s after kill -9: " + c.snapshot());
            } while (n >= 0);
            assertTrue(n == SdpConnection.FAILED || got == 8 << 20, "ended " + n + " after " + got + ": " + c.snapshot());
            assertTrue(c.awaitReleased(TimeUnit.SECONDS.toNanos(10)), c::snapshot);
            assertEquals(0, zc.cacheStats().inUse(), zc.describe());
        }
    }
}
