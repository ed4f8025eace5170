package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.disni.SoftDisni;
import io.jsdp.testbed.disni.SoftDisniProvider;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.disni.DisniDevice;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine on the hardware path, run here through SoftRdma → DiSNI shim → DiSNI → verbs-disni: both
 * stacks on adapter devices over the shim's one SoftRdma device, as two applications share a host's
 * adapter. A stream with every byte checked, a half-close both ways and an abortive close behave as on
 * SoftRdma directly, and the adapter devices hold nothing afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DisniChainStreamTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    private static RdmaDevice openChainDevice() throws Exception {
        SoftDisniProvider shim = SoftDisni.install();
        return DisniDevice.open(new DisniDevice.Settings().address(InetAddress.getLoopbackAddress())
            .memory(shim.device()::allocateMemory).leakDetection(ResourceTracker.Level.ALL));
    }

    /** Runs {@code body} on a connected pair of stacks over two adapter devices. */
    private interface Body {
        void run(SdpConnection a, SdpConnection b) throws Exception;
    }

    private static void withPair(SdpOptions options, Body body) throws Exception {
        RdmaDevice da = openChainDevice();
        RdmaDevice db = openChainDevice();
        try (SdpStack sa = SdpStack.open(da); SdpStack sb = SdpStack.open(db);
             SdpListener l = sb.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8, options)) {
            SdpConnection a = sa.connect(l.localAddress(), options);
            assertTrue(a.awaitConnected(WAIT_NS), () -> a.failureDetail() + "\n" + a.snapshot());
            SdpConnection b = l.accept(WAIT_NS);
            assertNotNull(b);
            assertEquals("disni", da.provider());
            body.run(a, b);
            assertTrue(a.awaitReleased(WAIT_NS), a::snapshot);
            assertTrue(b.awaitReleased(WAIT_NS), b::snapshot);
        } finally {
            String leaks = da.resources().checkLeaks() + db.resources().checkLeaks();
            da.close();
            db.close();
            assertEquals("", leaks);
        }
    }

    @Test
    void aStreamArrivesIntactThroughDisni() throws Exception {
        withPair(new SdpOptions(), (a, b) -> {
            CompletableFuture<StreamCheck.Result> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return StreamCheck.read(b, 1 << 20, 7);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            StreamCheck.Result w = StreamCheck.write(a, 256L << 20, 1 << 20, 8, true);
            StreamCheck.Result r = reader.get(60, TimeUnit.SECONDS);
            assertEquals(w.bytes(), r.bytes());
            assertEquals(w.crc(), r.crc());
            b.close();
            a.close();
        });
    }

    @Test
    void tinyBuffersStarveCreditsWithoutDeadlockThroughDisni() throws Exception {
        withPair(new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(2), (a, b) -> {
            CompletableFuture<StreamCheck.Result> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return StreamCheck.read(b, 1 << 20, 9);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            StreamCheck.Result w = StreamCheck.write(a, 32L << 20, 1 << 20, 10, false);
            assertEquals(w.crc(), reader.get(60, TimeUnit.SECONDS).crc());
            assertEquals(QueuePair.RNR_RETRIES_NOT_AVAILABLE, a.stats().rnrRetries(),
                "DiSNI counts no RNR retries per queue pair: not available, not zero");
            assertTrue(a.snapshot().contains("rnrRetries=n/a"), a::snapshot);
            b.close();
            a.close();
        });
    }

    @Test
    void nicAssistedRingAndDeviceMessagesArriveIntactThroughDisni() throws Exception {
        // a small ring, so the writer often finds it full and gathers device messages out of its send ring
        SdpOptions nic = new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(8)
            .flowControl(FlowControlScheme.NIC);
        withPair(nic, (a, b) -> {
            assertEquals(FlowControlScheme.NIC, a.flowControlScheme());
            CompletableFuture<StreamCheck.Result> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return StreamCheck.read(b, 3000, 11);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            StreamCheck.Result w = StreamCheck.write(a, 16L << 20, 20000, 12, false);
            StreamCheck.Result r = reader.get(60, TimeUnit.SECONDS);
            assertEquals(w.bytes(), r.bytes());
            assertEquals(w.crc(), r.crc());
            Matcher m = Pattern.compile("device messages posted=(\\d+)").matcher(a.snapshot());
            assertTrue(m.find() && Long.parseLong(m.group(1)) > 0, "the device path was used: " + a.snapshot());
            b.close();
            a.close();
        });
    }

    @Test
    void halfCloseAndAbortBehaveAsOnSoftRdma() throws Exception {
        withPair(new SdpOptions(), (a, b) -> {
            Blocking.writeFully(a, ByteBuffer.wrap(new byte[] {1, 2, 3}));
            a.shutdownOutput();
            ByteBuffer got = ByteBuffer.allocate(3);
            Blocking.readFully(b, got);
            assertEquals(SdpConnection.EOF, Blocking.read(b, ByteBuffer.allocate(1)));
            Blocking.writeFully(b, ByteBuffer.wrap(new byte[] {4}));
            assertEquals(1, Blocking.read(a, ByteBuffer.allocate(4)));
            b.abort();
            assertEquals(SdpConnection.OP_ENDED, a.await(SdpConnection.OP_ENDED, WAIT_NS), a::snapshot);
            assertEquals(Failure.RESET_BY_PEER, a.failure());
        });
    }
}
