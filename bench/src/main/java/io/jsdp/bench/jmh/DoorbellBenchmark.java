package io.jsdp.bench.jmh;

import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.testbed.shm.SharedSegment;
import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.testbed.shm.ShmSettings;
import io.jsdp.testbed.shm.WaitWord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * SoftRdma's doorbell ({@link WaitWord}, the shared-memory wait every cross-process waiter uses), in
 * one JVM (issue 7). Run with {@code -prof gc}: neither path should allocate.
 *
 * <ul>
 *   <li>{@code wakeUnarmed} (average time): a wake with no waiter armed — what every message costs
 *       its sender while the receiver still spins: a volatile add and a load, no system call.</li>
 *   <li>{@code handOff} (sample time): a round trip between the benchmark thread and a partner thread
 *       through two words (wake the partner's, await ours). {@code spinNs=20000}: both spin, the
 *       doorbell is never rung; {@code spinNs=0}: both park at once and every hand-off rings a
 *       doorbell (the node's kernel crossing, then an unpark).</li>
 * </ul>
 */
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class DoorbellBenchmark {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    /** The waiters' spin window in ns (SoftRdma's {@code jsdp.soft.spinNs}). */
    @Param({"20000", "0"})
    public long spinNs;

    private Path dir;
    private ShmNode node;
    private WaitWord ours;
    private WaitWord theirs;
    private WaitWord idle;
    private Thread partner;
    private volatile boolean running;
    private long observed;

    /** Creates the benchmark (JMH). */
    public DoorbellBenchmark() {
    }

    /**
     * Opens a node in a private rendezvous directory and starts the partner thread.
     *
     * @throws IOException when the node cannot be opened
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("jsdp-doorbell");
        node = ShmNode.open(new Rendezvous(dir.resolve("rv")), ShmSettings.defaults().withSpinNs(spinNs));
        SharedSegment seg = node.createSegment(3 * WaitWord.BYTES);
        ours = WaitWord.at(node, seg, 0);
        theirs = WaitWord.at(node, seg, WaitWord.BYTES);
        idle = WaitWord.at(node, seg, 2 * WaitWord.BYTES);
        ours.bindWaiter();
        observed = ours.sequence();
        running = true;
        partner = new Thread(this::partnerLoop, "doorbell-partner");
        partner.setDaemon(true);
        partner.start();
    }

    private void partnerLoop() {
        theirs.bindWaiter();
        long seen = theirs.sequence();
        while (running) {
            long got = theirs.await(seen, WAIT_NS);
            if (got < 0) {
                if (got == WaitWord.TIMED_OUT) {
                    continue;
                }
                return;
            }
            seen = got;
            ours.wake();
        }
    }

    /**
     * Stops the partner and closes the node.
     *
     * @throws InterruptedException when interrupted while joining
     */
    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        running = false;
        theirs.wake();
        partner.join(TimeUnit.SECONDS.toMillis(15));
        node.close();
    }

    /**
     * A wake nobody waits for.
     *
     * @return whether a doorbell was rung (never)
     */
    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public boolean wakeUnarmed() {
        return idle.wake();
    }

    /**
     * One hand-off there and back.
     *
     * @return the sequence seen
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public long handOff() {
        theirs.wake();
        long got = ours.await(observed, WAIT_NS);
        if (got < 0) {
            throw new IllegalStateException("await returned " + got);
        }
        observed = got;
        return got;
    }
}
