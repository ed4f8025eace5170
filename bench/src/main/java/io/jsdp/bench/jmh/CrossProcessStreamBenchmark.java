package io.jsdp.bench.jmh;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.RdmaDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * One-way streaming of {@code messageBytes} messages from the benchmark JVM into a peer JVM's memory
 * (issue 3, acceptance 4: RDMA WRITE ≥ 70 % of the raw copy loop), beside two raw loops measured
 * the same way in the same run; {@code rdmaWrite / rawCopy} is the like-for-like ratio (one copy per
 * byte each), {@code rdmaWrite / rawRing} the one against a transport that delivers to a reader.
 * Throughput mode; one operation is one message, and the auxiliary counter {@code gigabytes} gives
 * GB/s (1 GB = 10⁹ B) directly.
 *
 * <ul>
 *   <li>{@code rawRing}: a transport floor, {@link ShmByteRing}: a {@code ringBytes} byte ring in a
 *       shared file in {@code /dev/shm}; this side copies each message in, the peer copies everything
 *       out into a {@code messageBytes} buffer of its own (two copies per byte, both sides spinning);</li>
 *   <li>{@code rawCopy}: the plain copy loop: the same messages copied once, slot after slot, into a
 *       {@code ringBytes} shared file the peer maps but never reads: what an RDMA WRITE that nobody
 *       reads costs without any verbs work;</li>
 *   <li>{@code rdmaWrite}: SoftRdma RDMA WRITEs from one registered {@code messageBytes} source buffer
 *       (device memory) into a {@code ringBytes} region of the peer's device memory, slot after slot,
 *       at most {@link RdmaWriteStream#WINDOW} outstanding, every
 *       {@link RdmaWriteStream#SIGNAL_EVERY}th signaled ({@link RdmaWriteStream}). The peer learns
 *       nothing but its region's address and key, sent in the accept's private data, and idles while
 *       the writes land; at the end of the trial it checks every slot against the source pattern and
 *       the trial fails if any byte differs.</li>
 * </ul>
 * {@code peer} and {@code placement} as in {@link CrossProcessPingPongBenchmark}, and as there, only
 * a run without forking measures all three between the same two processes (one peer JVM serving
 * {@code shm-sink}, {@code shm-hold} and {@code verbs-target} in turn; each trial logs the pids):
 * <pre>
 *   java -jar bench/target/jsdp-jmh.jar -f 0 -wi 3 -i 5 -p placement=split CrossProcessStream
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CrossProcessStreamBenchmark {

    /** Creates the benchmark (JMH). */
    public CrossProcessStreamBenchmark() {
    }

    /** What both transports share. */
    @State(Scope.Benchmark)
    public abstract static class Sides {
        /** {@code process} or {@code thread}. */
        @Param("process")
        public String peer;
        /** {@code unpinned}, {@code split}, {@code same} or {@code <cpus>/<cpus>} ({@link Placement}). */
        @Param("unpinned")
        public String placement;
        /** Bytes per message (per write). */
        @Param("65536")
        public int messageBytes;
        /** The raw ring's capacity and the RDMA target region's size, in bytes. */
        @Param("1048576")
        public int ringBytes;
        /** The running peer. */
        Peer far;

        /** Creates the state (JMH). */
        protected Sides() {
        }

        /** Stops the peer. */
        void closePeer() {
            if (far != null) {
                far.close();
                far = null;
            }
        }
    }

    /** The raw baseline: a shared-memory byte ring with a consuming peer. */
    @State(Scope.Benchmark)
    public static class RawRing extends Sides {
        private ShmByteRing ring;
        private ByteBuffer src;

        /** Creates the state (JMH). */
        public RawRing() {
        }

        /**
         * Creates the shared file and starts the consuming peer.
         *
         * @throws IOException when the file or the peer cannot be had
         * @throws InterruptedException when interrupted while starting the peer
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException, InterruptedException {
            SharedFile file = SharedFile.create(ShmByteRing.bytes(ringBytes));
            try {
                ring = new ShmByteRing(file.buffer(), ringBytes);
                far = Peer.start(peer, Placement.parse(placement), "shm-sink", file.path().toString(),
                    Integer.toString(ringBytes), Integer.toString(messageBytes));
            } finally {
                file.unlink(); // the peer has mapped it, or failed
            }
            src = ByteBuffer.allocateDirect(messageBytes);
            for (int i = 0; i < messageBytes; i++) {
                src.put(i, RdmaWriteStream.patternByte(i));
            }
        }

        /** Stops the consumer and the peer. */
        @TearDown(Level.Trial)
        public void tearDown() {
            if (ring != null) {
                ring.stop();
            }
            closePeer();
        }
    }

    /** The control: one copy per message into a shared file the peer maps and leaves alone. */
    @State(Scope.Benchmark)
    public static class RawCopy extends Sides {
        private ByteBuffer target;
        private ByteBuffer src;
        private int slots;
        private int next;

        /** Creates the state (JMH). */
        public RawCopy() {
        }

        /**
         * Creates the shared file and starts the peer that holds it.
         *
         * @throws IOException when the file or the peer cannot be had
         * @throws InterruptedException when interrupted while starting the peer
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException, InterruptedException {
            SharedFile file = SharedFile.create(ringBytes);
            try {
                target = file.buffer();
                far = Peer.start(peer, Placement.parse(placement), "shm-hold", file.path().toString(),
                    Integer.toString(ringBytes));
            } finally {
                file.unlink(); // the peer has mapped it, or failed
            }
            slots = ringBytes / messageBytes;
            src = ByteBuffer.allocateDirect(messageBytes);
            for (int i = 0; i < messageBytes; i++) {
                src.put(i, RdmaWriteStream.patternByte(i));
            }
        }

        /** Stops the peer. */
        @TearDown(Level.Trial)
        public void tearDown() {
            closePeer();
        }
    }

    /** SoftRdma RDMA WRITEs into a peer's region. */
    @State(Scope.Benchmark)
    public static class RdmaWrite extends Sides {
        private RdmaDevice device;
        private RdmaWriteStream stream;

        /** Creates the state (JMH). */
        public RdmaWrite() {
        }

        /**
         * Starts the target peer, connects to it and checks that a round of writes arrives intact.
         *
         * @throws IOException when the peer cannot be started or the connection fails
         * @throws InterruptedException when interrupted while connecting
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException, InterruptedException {
            try {
                device = SoftDevice.open(ResourceTracker.Level.OFF, SoftDevice.Fabric.HOST);
                far = Peer.start(peer, Placement.parse(placement), "verbs-target", "0", Integer.toString(ringBytes));
                stream = RdmaWriteStream.connect(device,
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), far.port()), messageBytes);
                for (int i = 0; i < ringBytes / messageBytes; i++) {
                    if (!stream.write(far)) {
                        throw new IllegalStateException("peer gone");
                    }
                }
                checkArrived();
            } catch (IOException | InterruptedException | RuntimeException e) {
                tearDown();
                throw e;
            }
        }

        private void checkArrived() {
            long mismatches = stream.verify(far);
            if (mismatches != 0) {
                throw new IllegalStateException(mismatches + " bytes of the " + stream.posted()
                    + " RDMA WRITEs did not arrive as written");
            }
        }

        /**
         * Checks that what was written arrived, then stops the peer's role and closes the connection and
         * the device.
         *
         * @throws IOException when closing the connection fails
         */
        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            try {
                if (stream != null && far != null && far.getAsBoolean()) {
                    checkArrived();
                }
            } finally {
                // The peer's role first, as in the ping-pong.
                closePeer();
                try {
                    if (stream != null) {
                        stream.close();
                        stream = null;
                    }
                } finally {
                    if (device != null) {
                        device.close();
                        device = null;
                    }
                }
            }
        }
    }

    /** Bytes moved per iteration, reported by JMH as a rate: GB/s. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Moved {
        /** Gigabytes (10⁹ B) moved this iteration. */
        public double gigabytes;

        /** Creates the counters (JMH). */
        public Moved() {
        }

        /** Zeroes the counter for the next iteration. */
        @Setup(Level.Iteration)
        public void reset() {
            gigabytes = 0;
        }
    }

    /**
     * One raw message: wait for room, copy in, publish.
     *
     * @param r the ring and peer
     * @param moved the byte counter
     */
    @Benchmark
    public void rawRing(RawRing r, Moved moved) {
        if (!r.ring.write(r.src, r.messageBytes, r.far)) {
            throw new IllegalStateException("peer gone");
        }
        moved.gigabytes += r.messageBytes * 1e-9;
    }

    /**
     * One plain copy into the next slot.
     *
     * @param c the file and peer
     * @param moved the byte counter
     */
    @Benchmark
    public void rawCopy(RawCopy c, Moved moved) {
        c.target.put(c.next * c.messageBytes, c.src, 0, c.messageBytes);
        c.next = c.next + 1 == c.slots ? 0 : c.next + 1;
        moved.gigabytes += c.messageBytes * 1e-9;
    }

    /**
     * One RDMA WRITE: post (after waiting for a completion when the window is full).
     *
     * @param w the stream and peer
     * @param moved the byte counter
     */
    @Benchmark
    public void rdmaWrite(RdmaWrite w, Moved moved) {
        if (!w.stream.write(w.far)) {
            throw new IllegalStateException("peer gone");
        }
        moved.gigabytes += w.messageBytes * 1e-9;
    }
}
