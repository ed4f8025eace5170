package io.jsdp.bench.jmh;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.RdmaDevice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
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
 * Round-trip latency of a {@code size}-byte ping-pong inside one JVM: the benchmark thread sends and
 * spins for the echo, an echo thread spins and answers. Sample-time mode reports p50 and p99.
 *
 * <ul>
 *   <li>{@code softRdmaSendRecv}: SEND/RECV between two SoftRdma queue pairs on two devices, polling
 *       completion queues (foundation issue, acceptance 5: target p50 ≤ 1 µs).</li>
 *   <li>{@code jdkTcpBusyPoll}: the same exchange over JDK TCP loopback with non-blocking channels
 *       spinning on read: the fairest TCP counterpart of a spinning device, in the same run.</li>
 * </ul>
 * Each transport has its own state, so only the measured transport's echo thread runs.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class PingPongBenchmark {

    /** Creates the benchmark (JMH). */
    public PingPongBenchmark() {
    }

    /** Two SoftRdma devices with one connected queue pair each, and a spinning echo thread. */
    @State(Scope.Benchmark)
    public static class SoftRdma {
        /** Message size in bytes. */
        @Param("64")
        public int size;
        /**
         * The devices' fabric: {@code HOST} (the default device: queue pairs connect through the
         * shared-memory wires, even in one JVM) or {@code JVM} (the in-JVM fabric: the requester
         * executes directly against the responder's queues).
         */
        @Param({"HOST", "JVM"})
        public String fabric;
        private RdmaDevice deviceA;
        private RdmaDevice deviceB;
        private VerbsPair client;
        private VerbsPair server;
        private Thread echo;
        private volatile boolean running;
        private final java.util.function.BooleanSupplier isRunning = () -> running;

        /** Creates the state (JMH). */
        public SoftRdma() {
        }

        /**
         * Connects the queue pairs and starts the echo thread.
         *
         * @throws Exception on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws Exception {
            running = true;
            SoftDevice.Fabric f = SoftDevice.Fabric.valueOf(fabric);
            deviceA = SoftDevice.open(ResourceTracker.configuredLevel(), f);
            deviceB = SoftDevice.open(ResourceTracker.configuredLevel(), f);
            VerbsPair[] ends = VerbsPair.connect(deviceA, deviceB, size);
            client = ends[0];
            server = ends[1];
            echo = new Thread(() -> {
                while (server.awaitRecv(isRunning)) {
                    server.send(size);
                    server.postRecv(size);
                }
            }, "softrdma-echo");
            echo.setDaemon(true);
            echo.start();
        }

        /**
         * Stops the echo thread and closes the devices.
         *
         * @throws Exception on failure
         */
        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            running = false;
            echo.join(5_000);
            client.close();
            server.close();
            deviceA.close();
            deviceB.close();
        }
    }

    /** A JDK TCP loopback connection with non-blocking channels and a spinning echo thread. */
    @State(Scope.Benchmark)
    public static class Tcp {
        /** Message size in bytes. */
        @Param("64")
        public int size;
        private ServerSocketChannel listener;
        private SocketChannel client;
        private SocketChannel server;
        private ByteBuffer buffer;
        private Thread echo;
        private volatile boolean running;

        /** Creates the state (JMH). */
        public Tcp() {
        }

        /**
         * Connects and starts the echo thread.
         *
         * @throws IOException on failure
         */
        @Setup(Level.Trial)
        public void setUp() throws IOException {
            running = true;
            listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            client = SocketChannel.open(listener.getLocalAddress());
            server = listener.accept();
            for (SocketChannel ch : new SocketChannel[] {client, server}) {
                ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
                ch.configureBlocking(false);
            }
            buffer = ByteBuffer.allocateDirect(size);
            echo = new Thread(this::echoLoop, "tcp-echo");
            echo.setDaemon(true);
            echo.start();
        }

        private void echoLoop() {
            ByteBuffer buf = ByteBuffer.allocateDirect(size);
            try {
                while (running) {
                    if (server.read(buf) < 0) {
                        return;
                    }
                    if (!buf.hasRemaining()) {
                        buf.flip();
                        while (buf.hasRemaining()) {
                            server.write(buf);
                        }
                        buf.clear();
                    }
                }
            } catch (IOException e) {
                if (running) {
                    throw new IllegalStateException(e);
                }
            }
        }

        /**
         * Stops the echo thread and closes the channels.
         *
         * @throws Exception on failure
         */
        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            running = false;
            echo.join(5_000);
            client.close();
            server.close();
            listener.close();
        }
    }

    /**
     * One SoftRdma round trip: SEND, then spin until the echoed SEND's receive completes.
     *
     * @param s the connection
     * @return a value JMH consumes
     */
    @Benchmark
    public boolean softRdmaSendRecv(SoftRdma s) {
        s.client.send(s.size);
        boolean received = s.client.awaitRecv(s.isRunning);
        s.client.postRecv(s.size);
        return received;
    }

    /**
     * One JDK TCP round trip over loopback, spinning on non-blocking reads.
     *
     * @param t the connection
     * @return bytes read
     * @throws IOException on failure
     */
    @Benchmark
    public int jdkTcpBusyPoll(Tcp t) throws IOException {
        ByteBuffer b = t.buffer;
        b.clear();
        while (b.hasRemaining()) {
            t.client.write(b);
        }
        b.clear();
        int total = 0;
        while (b.hasRemaining()) {
            int n = t.client.read(b);
            if (n < 0) {
                throw new IOException("echo closed");
            }
            total += n;
        }
        return total;
    }
}
