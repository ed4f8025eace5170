package io.jsdp.bench.jmh;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.RdmaDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.net.StandardSocketOptions;
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
 * Round-trip latency of a {@code size}-byte ping-pong between the benchmark JVM and a peer JVM, both
 * sides spinning (issue 3, acceptance 4: verbs p50 ≤ 1 µs), beside the raw floor measured the same
 * way in the same run. Sample-time mode reports p50 and p99.
 *
 * <ul>
 *   <li>{@code rawShm}: the baseline, {@link ShmPingPong}: a flag ping-pong over a shared file in
 *       {@code /dev/shm}, the payload copied in and out on both sides (four copies per round trip);</li>
 *   <li>{@code verbsSendRecv}: SEND/RECV between two SoftRdma queue pairs on host-fabric devices, one
 *       per JVM, connected through the connection manager; both sides spin on their completion
 *       queues, the peer echoes each message from its receive buffer (a device copy each way).</li>
 * </ul>
 * {@code peer=process} (default) puts the far side in a second JVM ({@link PeerProcess});
 * {@code peer=thread} in a thread of this JVM, the same code without the process boundary.
 * {@code placement} pins the two sides ({@link Placement}); the chosen CPUs are logged at setup.
 *
 * <p><b>The same two processes.</b> A benchmark JVM keeps one peer JVM per placement and has it serve
 * each trial's role in turn ({@code shm-echo}, then {@code verbs-echo}). Without forking, both
 * methods run in the JMH JVM, so the floor and the verbs figure are measured between the same two
 * pids, which every trial logs ({@code # jsdp bench: ... peer process pid P ...; benchmark JVM pid B}):
 * <pre>
 *   java -jar bench/target/jsdp-jmh.jar -f 0 -wi 3 -i 5 -p placement=split CrossProcessPingPong
 * </pre>
 * With forking (the default {@code -f 1}) JMH runs each method in a fresh JVM with a peer of its own:
 * the same roles on the same CPUs, but not the same pids. Without forking JMH also shares one JIT
 * profile between the methods; the two hot loops here have nothing in common but the peer-liveness
 * check, asked once per 65,536 spins.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CrossProcessPingPongBenchmark {

    /** Creates the benchmark (JMH). */
    public CrossProcessPingPongBenchmark() {
    }

    /** What both transports share: where the peer runs, where each side is pinned, the message size. */
    @State(Scope.Benchmark)
    public abstract static class Sides {
        /** {@code process} or {@code thread}. */
        @Param("process")
        public String peer;
        /** {@code unpinned}, {@code split}, {@code same} or {@code <cpus>/<cpus>} ({@link Placement}). */
        @Param("unpinned")
        public String placement;
        /** Message size in bytes. */
        @Param("64")
        public int size;
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

    /** The raw baseline: a shared-memory ping-pong with an echo peer. */
    @State(Scope.Benchmark)
    public static class RawShm extends Sides {
        private ShmPingPong pingPong;
        private ByteBuffer src;
        private ByteBuffer dst;

        /** Creates the state (JMH). */
        public RawShm() {
        }

        /**
         * Creates the shared file, starts the echo peer and checks one round trip carries the payload.
         *
         * @throws IOException when the file or the peer cannot be had
         * @throws InterruptedException when interrupted while starting the peer
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException, InterruptedException {
            SharedFile file = SharedFile.create(ShmPingPong.bytes(size));
            try {
                pingPong = new ShmPingPong(file.buffer(), size);
                far = Peer.start(peer, Placement.parse(placement), "shm-echo", file.path().toString(),
                    Integer.toString(size));
            } finally {
                file.unlink(); // the peer has mapped it, or failed
            }
            try {
                src = ByteBuffer.allocateDirect(size);
                dst = ByteBuffer.allocateDirect(size);
                for (int i = 0; i < size; i++) {
                    src.put(i, (byte) (i + 1));
                }
                if (!pingPong.roundTrip(src, dst, far) || !dst.equals(src)) {
                    throw new IllegalStateException("the echo did not return the payload");
                }
            } catch (RuntimeException e) {
                tearDown();
                throw e;
            }
        }

        /** Stops the echo and the peer. */
        @TearDown(Level.Trial)
        public void tearDown() {
            if (pingPong != null) {
                pingPong.stop();
            }
            closePeer();
        }
    }

    /** SoftRdma SEND/RECV with an echo peer. */
    @State(Scope.Benchmark)
    public static class Verbs extends Sides {
        private RdmaDevice device;
        private VerbsPair client;

        /** Creates the state (JMH). */
        public Verbs() {
        }

        /**
         * Starts the echo peer, connects to it and checks one round trip carries the payload.
         *
         * @throws IOException when the peer cannot be started or the connection fails
         * @throws InterruptedException when interrupted while connecting
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException, InterruptedException {
            try {
                device = SoftDevice.open(ResourceTracker.Level.OFF, SoftDevice.Fabric.HOST);
                far = Peer.start(peer, Placement.parse(placement), "verbs-echo", "0", Integer.toString(size));
                client = VerbsPair.connect(device, new InetSocketAddress(InetAddress.getLoopbackAddress(), far.port()),
                    size);
                ByteBuffer out = client.sendBuffer();
                for (int i = 0; i < size; i++) {
                    out.put(i, (byte) (i + 1));
                }
                client.send(size);
                if (!client.awaitRecv(far)
                    || !client.recvBuffer().limit(size).equals(client.sendBuffer().limit(size))) {
                    throw new IllegalStateException("the echo did not return the payload");
                }
                client.postRecv(size);
            } catch (IOException | InterruptedException | RuntimeException e) {
                tearDown();
                throw e;
            }
        }

        /**
         * Stops the peer's role, then closes the connection and the device.
         *
         * @throws IOException when closing the connection fails
         */
        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            // The peer's role first: closing our end first would flush its posted receive, a failure.
            closePeer();
            try {
                if (client != null) {
                    client.close();
                    client = null;
                }
            } finally {
                if (device != null) {
                    device.close();
                    device = null;
                }
            }
        }
    }

    /** JDK TCP loopback with an echo peer: the transport jsdp replaces, between the same processes. */
    @State(Scope.Benchmark)
    public static class Tcp extends Sides {
        private SocketChannel channel;
        private ByteBuffer buf;

        /** Creates the state (JMH). */
        public Tcp() {
        }

        /**
         * Starts the echo peer, connects to it and checks one round trip carries the payload.
         *
         * @throws IOException when the peer cannot be started or the connection fails
         * @throws InterruptedException when interrupted while starting the peer
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException, InterruptedException {
            try {
                far = Peer.start(peer, Placement.parse(placement), "tcp-echo", Integer.toString(size));
                channel = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), far.port()));
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.configureBlocking(false);
                buf = ByteBuffer.allocateDirect(size);
                for (int i = 0; i < size; i++) {
                    buf.put(i, (byte) (i + 1));
                }
                if (!roundTrip() || buf.get(size - 1) != (byte) size) {
                    throw new IllegalStateException("the echo did not return the payload");
                }
            } catch (IOException | RuntimeException e) {
                tearDown();
                throw e;
            }
        }

        /** Writes the message, spins on {@code read} until the echo is back; false if the peer left. */
        boolean roundTrip() throws IOException {
            buf.clear();
            while (buf.hasRemaining()) {
                channel.write(buf);
            }
            buf.clear();
            int spins = 0;
            while (buf.hasRemaining()) {
                int n = channel.read(buf);
                if (n < 0 || (n == 0 && (++spins & 0xffff) == 0 && !far.getAsBoolean())) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Stops the peer's role, then closes the connection.
         *
         * @throws IOException when closing fails
         */
        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            try {
                closePeer();
            } finally {
                if (channel != null) {
                    channel.close();
                    channel = null;
                }
            }
        }
    }

    /**
     * One TCP round trip: write, spin on read until the echo is back.
     *
     * @param t the connection and peer
     * @return the answer, for JMH to consume
     * @throws IOException on a socket failure
     */
    @Benchmark
    public ByteBuffer tcpBusyPoll(Tcp t) throws IOException {
        if (!t.roundTrip()) {
            throw new IllegalStateException("peer gone");
        }
        return t.buf;
    }

    /**
     * One raw round trip: copy in, release, spin, copy out.
     *
     * @param s the shared memory and peer
     * @return the answer, for JMH to consume
     */
    @Benchmark
    public ByteBuffer rawShm(RawShm s) {
        if (!s.pingPong.roundTrip(s.src, s.dst, s.far)) {
            throw new IllegalStateException("peer gone");
        }
        return s.dst;
    }

    /**
     * One SoftRdma round trip: SEND, then spin until the echoed SEND's receive completes.
     *
     * @param v the connection and peer
     * @return a value JMH consumes
     */
    @Benchmark
    public boolean verbsSendRecv(Verbs v) {
        v.client.send(v.size);
        if (!v.client.awaitRecv(v.far)) {
            throw new IllegalStateException("peer gone");
        }
        v.client.postRecv(v.size);
        return true;
    }
}
