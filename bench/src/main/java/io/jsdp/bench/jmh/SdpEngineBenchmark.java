package io.jsdp.bench.jmh;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
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
 * The SDP engine ({@code flowcontrol}) in one JVM, beside JDK loopback TCP in the same run (issue 5,
 * acceptance 4: no allocation per message on the send or receive path — run with {@code -prof gc}
 * and read {@code gc.alloc.rate.norm}, which JMH sums over every thread of the JVM, so the echo or
 * sink thread and the stacks' service threads count too).
 *
 * <ul>
 *   <li>{@code sdpPingPong} / {@code tcpPingPong} (sample time: p50, p99): the benchmark thread writes
 *       {@code size} bytes and spins on non-blocking reads until they come back; an echo thread spins
 *       on non-blocking reads and writes them back. SDP connections have {@code TCP_NODELAY}
 *       ({@link SdpOptions#noDelay}), as the TCP channels do.</li>
 *   <li>{@code sdpStream} / {@code tcpStream} (throughput; one operation is one {@code chunk}-byte
 *       write, the auxiliary counter {@code gigabytes} is GB/s): the benchmark thread spins on
 *       non-blocking writes until the chunk is taken; a sink thread spins on non-blocking reads and
 *       drops the bytes. SDP with the default buffers (16 × 32 KiB each way).</li>
 * </ul>
 * Both sides always spin (no parking, no readiness callbacks); nothing is pinned. SDP runs over two
 * SoftRdma devices of {@code fabric} ({@code HOST}: the host fabric's devices of one JVM connect
 * directly; {@code HOST_ONLY}: through the shared-memory wires, as across processes).
 */
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class SdpEngineBenchmark {

    /** Creates the benchmark (JMH). */
    public SdpEngineBenchmark() {
    }

    /** Two SDP stacks on two SoftRdma devices and one connection between them. */
    @State(Scope.Benchmark)
    public abstract static class SdpSides {
        /** The devices' fabric: {@code HOST} or {@code HOST_ONLY}. */
        @Param("HOST")
        public String fabric;
        private SoftDevice deviceA;
        private SoftDevice deviceB;
        private SdpStack stackA;
        private SdpStack stackB;
        /** The benchmark thread's end (active). */
        SdpConnection client;
        /** The far end (passive), the echo's or the sink's. */
        SdpConnection server;
        private Thread far;
        /** Read by the far thread; false ends it. */
        volatile boolean running;

        /**
         * Connects and starts the far thread.
         *
         * @param options both ends' settings
         * @param name the far thread's name
         * @throws Exception on failure
         */
        void open(SdpOptions options, String name) throws Exception {
            SoftDevice.Fabric f = SoftDevice.Fabric.valueOf(fabric);
            deviceA = SoftDevice.open(ResourceTracker.configuredLevel(), f);
            deviceB = SoftDevice.open(ResourceTracker.configuredLevel(), f);
            stackA = SdpStack.open(deviceA);
            stackB = SdpStack.open(deviceB);
            try (SdpListener l = stackB.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1, options)) {
                client = stackA.connect(l.localAddress(), options);
                if (!client.awaitConnected(TimeUnit.SECONDS.toNanos(10))) {
                    throw new IOException("connect: " + client.failureDetail());
                }
                server = l.accept(TimeUnit.SECONDS.toNanos(10));
                if (server == null) {
                    throw new IOException("nothing accepted");
                }
            }
            running = true;
            far = new Thread(this::farLoop, name);
            far.setDaemon(true);
            far.start();
        }

        /** The echo or sink: spins until {@link #running} is false. */
        abstract void farLoop();

        /**
         * Stops the far thread and closes everything.
         *
         * @throws Exception on failure
         */
        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            running = false;
            far.join(5_000);
            client.abort();
            server.abort();
            stackA.close();
            stackB.close();
            deviceA.close();
            deviceB.close();
        }
    }

    /** SDP ping-pong: an echo thread spinning on the passive end. */
    @State(Scope.Benchmark)
    public static class SdpPingPong extends SdpSides {
        /** Message size in bytes. */
        @Param("64")
        public int size;
        /** The benchmark thread's buffer. */
        ByteBuffer buffer;

        /** Creates the state (JMH). */
        public SdpPingPong() {
        }

        /**
         * Connects and starts the echo.
         *
         * @throws Exception on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws Exception {
            buffer = ByteBuffer.allocateDirect(size);
            open(new SdpOptions().noDelay(true), "sdp-echo");
        }

        @Override
        void farLoop() {
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            while (running) {
                int n = server.read(b);
                if (n < 0) {
                    return;
                }
                if (!b.hasRemaining()) {
                    b.flip();
                    while (b.hasRemaining() && running) {
                        if (server.write(b) < 0) {
                            return;
                        }
                    }
                    b.clear();
                }
            }
        }
    }

    /** SDP one-way stream: a sink thread spinning on the passive end. */
    @State(Scope.Benchmark)
    public static class SdpStream extends SdpSides {
        /** Bytes per write. */
        @Param("65536")
        public int chunk;
        /** The benchmark thread's buffer. */
        ByteBuffer buffer;

        /** Creates the state (JMH). */
        public SdpStream() {
        }

        /**
         * Connects and starts the sink.
         *
         * @throws Exception on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws Exception {
            buffer = ByteBuffer.allocateDirect(chunk);
            open(new SdpOptions(), "sdp-sink");
        }

        @Override
        void farLoop() {
            ByteBuffer b = ByteBuffer.allocateDirect(chunk);
            while (running) {
                b.clear();
                if (server.read(b) < 0) {
                    return;
                }
            }
        }
    }

    /** A JDK TCP loopback connection, non-blocking channels, {@code TCP_NODELAY}. */
    @State(Scope.Benchmark)
    public abstract static class TcpSides {
        private ServerSocketChannel listener;
        /** The benchmark thread's end. */
        SocketChannel client;
        /** The far end. */
        SocketChannel server;
        private Thread far;
        /** Read by the far thread; false ends it. */
        volatile boolean running;

        /**
         * Connects and starts the far thread.
         *
         * @param name the far thread's name
         * @throws IOException on failure
         */
        void open(String name) throws IOException {
            listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            client = SocketChannel.open(listener.getLocalAddress());
            server = listener.accept();
            for (SocketChannel ch : new SocketChannel[] {client, server}) {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.configureBlocking(false);
            }
            running = true;
            far = new Thread(() -> {
                try {
                    farLoop();
                } catch (IOException e) {
                    if (running) {
                        throw new IllegalStateException(e);
                    }
                }
            }, name);
            far.setDaemon(true);
            far.start();
        }

        /**
         * The echo or sink: spins until {@link #running} is false.
         *
         * @throws IOException on failure
         */
        abstract void farLoop() throws IOException;

        /**
         * Stops the far thread and closes the channels.
         *
         * @throws Exception on failure
         */
        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            running = false;
            far.join(5_000);
            client.close();
            server.close();
            listener.close();
        }
    }

    /** TCP ping-pong: an echo thread spinning on the accepted channel. */
    @State(Scope.Benchmark)
    public static class TcpPingPong extends TcpSides {
        /** Message size in bytes. */
        @Param("64")
        public int size;
        /** The benchmark thread's buffer. */
        ByteBuffer buffer;

        /** Creates the state (JMH). */
        public TcpPingPong() {
        }

        /**
         * Connects and starts the echo.
         *
         * @throws IOException on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException {
            buffer = ByteBuffer.allocateDirect(size);
            open("tcp-echo");
        }

        @Override
        void farLoop() throws IOException {
            ByteBuffer b = ByteBuffer.allocateDirect(size);
            while (running) {
                if (server.read(b) < 0) {
                    return;
                }
                if (!b.hasRemaining()) {
                    b.flip();
                    while (b.hasRemaining()) {
                        server.write(b);
                    }
                    b.clear();
                }
            }
        }
    }

    /** TCP one-way stream: a sink thread spinning on the accepted channel. */
    @State(Scope.Benchmark)
    public static class TcpStream extends TcpSides {
        /** Bytes per write. */
        @Param("65536")
        public int chunk;
        /** The benchmark thread's buffer. */
        ByteBuffer buffer;

        /** Creates the state (JMH). */
        public TcpStream() {
        }

        /**
         * Connects and starts the sink.
         *
         * @throws IOException on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException {
            buffer = ByteBuffer.allocateDirect(chunk);
            open("tcp-sink");
        }

        @Override
        void farLoop() throws IOException {
            ByteBuffer b = ByteBuffer.allocateDirect(chunk);
            while (running) {
                b.clear();
                if (server.read(b) < 0) {
                    return;
                }
            }
        }
    }

    /** Bytes moved, as an auxiliary result. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Moved {
        /** Gigabytes (10⁹ B) moved this iteration. */
        public double gigabytes;

        /** Creates the counters (JMH). */
        public Moved() {
        }

        /** Clears the counter before each iteration. */
        @Setup(Level.Iteration)
        public void clear() {
            gigabytes = 0;
        }
    }

    /**
     * One SDP round trip: write, then spin on non-blocking reads until the echo is back.
     *
     * @param s the connection
     * @return bytes read
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int sdpPingPong(SdpPingPong s) {
        ByteBuffer b = s.buffer;
        SdpConnection c = s.client;
        b.clear();
        while (b.hasRemaining()) {
            if (c.write(b) < 0) {
                throw new IllegalStateException("write: " + c.failureDetail());
            }
        }
        b.clear();
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new IllegalStateException("read: " + c.failureDetail());
            }
        }
        return b.position();
    }

    /**
     * One TCP round trip over loopback, spinning on non-blocking reads.
     *
     * @param t the connection
     * @return bytes read
     * @throws IOException on failure
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public int tcpPingPong(TcpPingPong t) throws IOException {
        ByteBuffer b = t.buffer;
        b.clear();
        while (b.hasRemaining()) {
            t.client.write(b);
        }
        b.clear();
        while (b.hasRemaining()) {
            if (t.client.read(b) < 0) {
                throw new IOException("echo closed");
            }
        }
        return b.position();
    }

    /**
     * One {@code chunk}-byte SDP write, spinning until all of it is taken.
     *
     * @param s the connection
     * @param moved the bytes counter
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void sdpStream(SdpStream s, Moved moved) {
        ByteBuffer b = s.buffer;
        SdpConnection c = s.client;
        b.clear();
        while (b.hasRemaining()) {
            if (c.write(b) < 0) {
                throw new IllegalStateException("write: " + c.failureDetail());
            }
        }
        moved.gigabytes += s.chunk * 1e-9;
    }

    /**
     * One {@code chunk}-byte TCP write, spinning until all of it is taken.
     *
     * @param t the connection
     * @param moved the bytes counter
     * @throws IOException on failure
     */
    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void tcpStream(TcpStream t, Moved moved) throws IOException {
        ByteBuffer b = t.buffer;
        b.clear();
        while (b.hasRemaining()) {
            t.client.write(b);
        }
        moved.gigabytes += t.chunk * 1e-9;
    }
}
