package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 5, acceptance 1 in one JVM: random write sizes (1 B – 1 MiB) against random read sizes, with
 * every byte checked and a CRC-32C on both ends; then the same with 4 KiB buffers, three each way (two data credits and the reserved one), so
 * the writer runs out of credits all the time. Every case runs for each flow-control scheme (issue 8,
 * acceptance 1), both ends asking for it; each checks the connection really uses it.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class StreamIntegrityTest {
    static final long GIB = 1L << 30;
    static final int MIB = 1 << 20;

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void oneGibibyteOfRandomWritesArrivesIntactWithDefaultBuffers(FlowControlScheme scheme) throws Exception {
        run(new SdpOptions().flowControl(scheme), new SdpOptions().flowControl(scheme), bounded(scheme), 1);
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void oneGibibyteArrivesIntactWithTwoFourKibibyteDataCreditsEachWay(FlowControlScheme scheme) throws Exception {
        SdpOptions tiny = new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(2).flowControl(scheme);
        run(tiny, tiny.copy(), bounded(scheme), 2);
    }

    /** The new schemes at the full gibibyte (the normal build runs them at an eighth). */
    @ParameterizedTest
    @EnumSource(value = FlowControlScheme.class, names = {"PACKETIZED", "NIC"})
    @Tag("slow")
    void oneGibibyteArrivesIntactForEveryScheme(FlowControlScheme scheme) throws Exception {
        run(new SdpOptions().flowControl(scheme), new SdpOptions().flowControl(scheme), GIB, 3);
        SdpOptions tiny = new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(2).flowControl(scheme);
        run(tiny, tiny.copy(), GIB, 4);
    }

    /** Credit-based (the default) streams the full gibibyte in the normal build, the others an eighth, to keep CI short. */
    private static long bounded(FlowControlScheme scheme) {
        return scheme == FlowControlScheme.CREDIT ? GIB : GIB / 8;
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void bothDirectionsAtOnceArriveIntact(FlowControlScheme scheme) throws Exception {
        SdpOptions small = new SdpOptions().bufferBytes(8192).receiveBuffers(4).sendBuffers(4).flowControl(scheme);
        try (SdpPair p = SdpPair.open(small, small.copy())) {
            assertEquals(scheme, p.a.flowControlScheme());
            assertEquals(scheme, p.b.flowControlScheme());
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                Future<StreamCheck.Result> aw = pool.submit(() -> StreamCheck.write(p.a, 128L * MIB, MIB, 11, true));
                Future<StreamCheck.Result> bw = pool.submit(() -> StreamCheck.write(p.b, 128L * MIB, MIB, 12, false));
                Future<StreamCheck.Result> ar = pool.submit(() -> StreamCheck.read(p.a, MIB, 13));
                Future<StreamCheck.Result> br = pool.submit(() -> StreamCheck.read(p.b, MIB, 14));
                awaitAll(aw, bw, ar, br); // a stall fails with every side's state, not the first side's alone
                assertEquals(aw.get(), withoutOps(br.get(), aw.get()));
                assertEquals(bw.get(), withoutOps(ar.get(), bw.get()));
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** Waits for every task; when any failed, fails with what each one ended in (a stall's snapshot of its side). */
    @SafeVarargs
    private static void awaitAll(Future<StreamCheck.Result>... tasks) throws InterruptedException {
        StringBuilder failures = new StringBuilder();
        for (int i = 0; i < tasks.length; i++) {
            try {
                tasks[i].get();
            } catch (java.util.concurrent.ExecutionException e) {
                failures.append("\ntask ").append(i).append(": ").append(e.getCause());
            }
        }
        if (failures.length() > 0) {
            throw new AssertionError("a side failed:" + failures);
        }
    }

    private static StreamCheck.Result withoutOps(StreamCheck.Result read, StreamCheck.Result written) {
        return new StreamCheck.Result(read.bytes(), read.crc(), written.operations());
    }

    static void run(SdpOptions a, SdpOptions b, long total, long seed) throws Exception {
        try (SdpPair p = SdpPair.open(a, b)) {
            FlowControlScheme expected = FlowControlScheme.negotiate(a.flowControl(), b.flowControl());
            assertEquals(expected, p.a.flowControlScheme(), "active side's scheme");
            assertEquals(expected, p.b.flowControlScheme(), "passive side's scheme");
            CompletableFuture<StreamCheck.Result> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return StreamCheck.read(p.b, MIB, seed * 31);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            long t0 = System.nanoTime();
            StreamCheck.Result w = StreamCheck.write(p.a, total, MIB, seed, seed % 2 == 1);
            StreamCheck.Result r = reader.get(240, TimeUnit.SECONDS);
            long ns = System.nanoTime() - t0;
            assertEquals(total, w.bytes());
            assertEquals(w.bytes(), r.bytes(), "bytes");
            assertEquals(w.crc(), r.crc(), "checksum");
            System.out.printf("stream %s %d MiB, %d writes, %d reads: %.2f GB/s%n", expected.configName(), total >> 20,
                w.operations(), r.operations(), total / (double) ns);
            p.b.close();
            p.a.close();
            boolean aReleased = p.a.awaitReleased(TimeUnit.SECONDS.toNanos(10));
            boolean bReleased = p.b.awaitReleased(TimeUnit.SECONDS.toNanos(10));
            assertTrue(aReleased && bReleased, "both ends end after close:\n" + p.a.snapshot() + p.b.snapshot());
        }
    }
}
