package io.jsdp.bench.jmh;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.RdmaDevice;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * The far side of the cross-process benchmarks. As a process ({@link #main}) it serves
 * {@linkplain Role roles} one after another, as told on its standard input, so that one peer JVM can
 * serve a raw baseline and the verbs benchmark in turn ({@link PeerProcess}). With {@code peer=thread}
 * one role runs in a thread of the benchmark JVM instead ({@link PeerThread}).
 *
 * <p>The control protocol, one line per message:
 * <pre>
 *   benchmark JVM -&gt; peer                 peer -&gt; benchmark JVM
 *                                          STARTED                 once, when the JVM is up
 *   &lt;role&gt; &lt;args...&gt;   start a role         READY &lt;info&gt;            the role is open: connect now
 *                                          ENDED ok | ENDED failed: &lt;why&gt;
 *                                                                  the role stopped (or failed to open)
 *   stop              stop the current role (no-op when none runs)
 *   end of input      stop the role and exit
 * </pre>
 * At most one role runs, so at most one spinning loop: a role command while one runs stops it first.
 * Anything else the peer prints (stack traces on standard error) is for the log. When the input ends,
 * however the benchmark JVM ended (closed the pipe or died), the peer stops its role and exits, and
 * halts after {@link #EXIT_GRACE_MS} if the role does not stop: no peer outlives its benchmark JVM.
 *
 * <p>Roles (arguments):
 * <ul>
 *   <li>{@code shm-echo <file> <size>}: answers {@link ShmPingPong} pings;</li>
 *   <li>{@code shm-sink <file> <ringBytes> <readBytes>}: reads a {@link ShmByteRing} dry;</li>
 *   <li>{@code shm-hold <file> <bytes>}: maps the file and idles (the target of a plain copy loop);</li>
 *   <li>{@code verbs-echo <port> <size>}: accepts one connection and echoes SEND/RECV messages;</li>
 *   <li>{@code verbs-target <port> <regionBytes>}: accepts one connection, lends a region for
 *       {@link RdmaWriteStream} and answers its verify request.</li>
 * </ul>
 * Verbs roles open a SoftRdma device on the host fabric ({@code SoftDevice.Fabric.HOST}) and listen
 * on the loopback address; port 0 takes an ephemeral port, reported as {@code READY port=N}. Each role
 * opens and closes its own device and files: nothing but the JVM carries over from one role to the
 * next.
 */
public final class BenchPeer {
    /** The line the peer prints once its JVM is up. */
    static final String STARTED = "STARTED";
    /** The first word of the line that says a role is open. */
    static final String READY = "READY";
    /** The first word of the line that says a role has stopped; {@code ok} or {@code failed: why} follows. */
    static final String ENDED = "ENDED";
    /** What follows {@link #ENDED} for a role that stopped when told. */
    static final String ENDED_OK = "ok";
    /** The command that stops the current role. */
    static final String STOP = "stop";
    /** How long the peer lingers after its input ended before it halts regardless. */
    private static final long EXIT_GRACE_MS = 3_000;
    /** How long a role may take to stop when told before the peer halts: one loop at a time, always. */
    private static final long STOP_WAIT_MS = 10_000;

    private BenchPeer() {
    }

    /**
     * One job of the peer: {@link #open} prepares (everything the benchmark needs before it connects),
     * {@link #run} serves until told to stop, {@link #close} releases.
     */
    interface Role extends AutoCloseable {
        /**
         * Prepares.
         *
         * @return what the READY line reports, e.g. {@code port=49152}
         * @throws IOException when preparing fails
         */
        String open() throws IOException;

        /**
         * Serves until the benchmark side says stop or {@code running} turns false.
         *
         * @param running asked now and then while idle
         * @throws IOException when serving fails
         * @throws InterruptedException when interrupted
         */
        void run(BooleanSupplier running) throws IOException, InterruptedException;

        @Override
        void close() throws IOException;
    }

    /**
     * The role named by {@code args}.
     *
     * @param args role name and its arguments
     * @return the role, not yet opened
     * @throws IllegalArgumentException for an unknown role or wrong arguments
     */
    static Role role(String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("no role named");
        }
        String[] a = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "shm-echo":
                expectArgs(args, 2);
                return new ShmEcho(Path.of(a[0]), Integer.parseInt(a[1]));
            case "shm-sink":
                expectArgs(args, 3);
                return new ShmSink(Path.of(a[0]), Integer.parseInt(a[1]), Integer.parseInt(a[2]));
            case "shm-hold":
                expectArgs(args, 2);
                return new ShmHold(Path.of(a[0]), Integer.parseInt(a[1]));
            case "verbs-echo":
                expectArgs(args, 2);
                return new VerbsEcho(Integer.parseInt(a[0]), Integer.parseInt(a[1]));
            case "tcp-echo":
                expectArgs(args, 1);
                return new TcpEcho(Integer.parseInt(a[0]));
            case "verbs-target":
                expectArgs(args, 2);
                return new VerbsTarget(Integer.parseInt(a[0]), Integer.parseInt(a[1]));
            default:
                throw new IllegalArgumentException("unknown peer role " + args[0]);
        }
    }

    private static void expectArgs(String[] args, int n) {
        if (args.length != n + 1) {
            throw new IllegalArgumentException(args[0] + " takes " + n + " arguments: " + Arrays.toString(args));
        }
    }

    /**
     * Serves roles as its standard input says (see the class comment) until the input ends.
     *
     * @param args none
     */
    public static void main(String[] args) {
        if (args.length != 0) {
            System.err.println("usage: BenchPeer (commands on standard input), not " + Arrays.toString(args));
            System.exit(2);
        }
        say(STARTED);
        Serving current = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.trim().split("\\s+");
                if (words[0].isEmpty()) {
                    continue;
                }
                if (current != null) {
                    if (!words[0].equals(STOP) && current.thread.isAlive()) {
                        System.err.println("bench peer: '" + line + "' while a role runs; stopping that first");
                    }
                    current.stop(STOP_WAIT_MS);
                    current = null;
                }
                if (!words[0].equals(STOP)) {
                    current = Serving.start(words);
                }
            }
        } catch (IOException e) {
            System.err.println("bench peer: reading commands failed, stopping: " + e);
        }
        // The input ended: the benchmark JVM is done or gone.
        Thread reaper = new Thread(BenchPeer::haltLater, "peer-exit-grace");
        reaper.setDaemon(true);
        reaper.start();
        if (current != null) {
            current.stop(EXIT_GRACE_MS);
        }
        System.exit(0);
    }

    private static void haltLater() {
        try {
            Thread.sleep(EXIT_GRACE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.err.println("bench peer: input ended " + EXIT_GRACE_MS + " ms ago and the peer has not exited; halting");
        Runtime.getRuntime().halt(2);
    }

    /** The ENDED line for a failure, on one line whatever the message holds. */
    private static String failed(Throwable e) {
        return ENDED + " failed: " + e.toString().replaceAll("\\s+", " ");
    }

    /** One control line to the benchmark JVM. */
    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** A role being served by its own thread in the peer process; {@link #stop} ends it. */
    private static final class Serving {
        private final Role role;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;

        private Serving(Role role) {
            this.role = role;
            this.thread = new Thread(this::serve, "peer-role");
        }

        /** Opens the role named by {@code words}: READY and a running role, or ENDED failed and null. */
        static Serving start(String[] words) {
            Role role;
            String info;
            try {
                role = role(words);
            } catch (RuntimeException e) {
                say(failed(e));
                return null;
            }
            try {
                info = role.open();
            } catch (IOException | RuntimeException e) {
                e.printStackTrace();
                closeQuietly(role);
                say(failed(e));
                return null;
            }
            Serving s = new Serving(role);
            say(READY + " " + info);
            s.thread.start();
            return s;
        }

        private void serve() {
            String ended = null;
            try {
                role.run(running::get);
            } catch (IOException | InterruptedException | RuntimeException e) {
                e.printStackTrace();
                ended = failed(e);
            } finally {
                if (!closeQuietly(role) && ended == null) {
                    ended = ENDED + " failed: close failed";
                }
            }
            say(ended != null ? ended : ENDED + " " + ENDED_OK);
        }

        /** Tells the role to stop and waits; halts the process when it does not, so no loop survives. */
        void stop(long waitMs) {
            running.set(false);
            try {
                thread.join(waitMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (thread.isAlive()) {
                System.err.println("bench peer: the role did not stop within " + waitMs + " ms; halting");
                Runtime.getRuntime().halt(3);
            }
        }
    }

    private static boolean closeQuietly(Role role) {
        try {
            role.close();
            return true;
        } catch (IOException | RuntimeException e) {
            e.printStackTrace();
            return false;
        }
    }

    private static SoftDevice openDevice() {
        return SoftDevice.open(ResourceTracker.Level.OFF, SoftDevice.Fabric.HOST);
    }

    /** Echo side of the raw ping-pong. */
    private static final class ShmEcho implements Role {
        private final Path file;
        private final int size;
        private ShmPingPong pingPong;

        ShmEcho(Path file, int size) {
            this.file = file;
            this.size = size;
        }

        @Override
        public String open() throws IOException {
            pingPong = new ShmPingPong(SharedFile.map(file, ShmPingPong.bytes(size)), size);
            return "mapped";
        }

        @Override
        public void run(BooleanSupplier running) {
            pingPong.echo(ByteBuffer.allocateDirect(size), running);
        }

        @Override
        public void close() {
            // the mapping goes with the process (or with the garbage collector, for a thread)
        }
    }

    /** Consumer side of the raw stream. */
    private static final class ShmSink implements Role {
        private final Path file;
        private final int ringBytes;
        private final int readBytes;
        private ShmByteRing ring;

        ShmSink(Path file, int ringBytes, int readBytes) {
            this.file = file;
            this.ringBytes = ringBytes;
            this.readBytes = readBytes;
        }

        @Override
        public String open() throws IOException {
            ring = new ShmByteRing(SharedFile.map(file, ShmByteRing.bytes(ringBytes)), ringBytes);
            return "mapped";
        }

        @Override
        public void run(BooleanSupplier running) {
            ring.drain(ByteBuffer.allocateDirect(readBytes), running);
        }

        @Override
        public void close() {
            // as ShmEcho
        }
    }

    /** Holds a mapping of the file the benchmark side copies into, and idles. */
    private static final class ShmHold implements Role {
        private final Path file;
        private final int bytes;
        /** Kept so the mapping lives as long as the role. */
        private ByteBuffer mapping;

        ShmHold(Path file, int bytes) {
            this.file = file;
            this.bytes = bytes;
        }

        @Override
        public String open() throws IOException {
            mapping = SharedFile.map(file, bytes);
            return "mapped " + mapping.capacity() + " B";
        }

        @Override
        public void run(BooleanSupplier running) throws InterruptedException {
            while (running.getAsBoolean()) {
                Thread.sleep(10);
            }
        }

        @Override
        public void close() {
            // as ShmEcho
        }
    }

    /** Passive side of the verbs ping-pong: echoes each message back from its receive buffer. */
    private static final class VerbsEcho implements Role {
        private final int port;
        private final int size;
        private RdmaDevice device;
        private VerbsPair pair;

        VerbsEcho(int port, int size) {
            this.port = port;
            this.size = size;
        }

        @Override
        public String open() throws IOException {
            device = openDevice();
            pair = VerbsPair.listen(device, port, size);
            return "port=" + pair.listenAddress().getPort();
        }

        @Override
        public void run(BooleanSupplier running) throws IOException, InterruptedException {
            if (!pair.accept(VerbsPair.CONNECT_WAIT_NS, running, size, new byte[0])) {
                return;
            }
            while (pair.awaitRecv(running)) {
                pair.echo(size);
                pair.postRecv(size);
            }
        }

        @Override
        public void close() throws IOException {
            try {
                if (pair != null) {
                    pair.close();
                }
            } finally {
                if (device != null) {
                    device.close();
                }
            }
        }
    }

    /**
     * Echo side of the TCP ping-pong: JDK loopback TCP, {@code TCP_NODELAY}, a non-blocking channel
     * spinning on {@code read} (the fairest TCP counterpart of a spinning device); reports its port.
     */
    private static final class TcpEcho implements Role {
        private final int size;
        private ServerSocketChannel listener;
        private SocketChannel channel;

        TcpEcho(int size) {
            this.size = size;
        }

        @Override
        public String open() throws IOException {
            listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return "port=" + ((InetSocketAddress) listener.getLocalAddress()).getPort();
        }

        @Override
        public void run(BooleanSupplier running) throws IOException {
            listener.configureBlocking(false);
            while ((channel = listener.accept()) == null) {
                if (!running.getAsBoolean()) {
                    return;
                }
                Thread.onSpinWait();
            }
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.configureBlocking(false);
            ByteBuffer buf = ByteBuffer.allocateDirect(size);
            int spins = 0;
            while (true) {
                int n = channel.read(buf);
                if (n < 0) {
                    return;
                }
                if (n == 0 && (++spins & 0xffff) == 0 && !running.getAsBoolean()) {
                    return;
                }
                if (!buf.hasRemaining()) {
                    buf.flip();
                    while (buf.hasRemaining()) {
                        channel.write(buf);
                    }
                    buf.clear();
                }
            }
        }

        @Override
        public void close() throws IOException {
            try {
                if (channel != null) {
                    channel.close();
                }
            } finally {
                listener.close();
            }
        }
    }

    /** Passive side of the RDMA WRITE stream: lends a region, then only answers verify requests. */
    private static final class VerbsTarget implements Role {
        private final int port;
        private final int regionBytes;
        private RdmaDevice device;
        private VerbsPair pair;
        private DeviceMemory target;
        private MemoryRegion targetMr;

        VerbsTarget(int port, int regionBytes) {
            this.port = port;
            this.regionBytes = regionBytes;
        }

        @Override
        public String open() throws IOException {
            device = openDevice();
            pair = VerbsPair.listen(device, port, RdmaWriteStream.CONTROL_BYTES);
            target = device.allocateMemory(regionBytes);
            targetMr = pair.pd.register(target.buffer(), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            return "port=" + pair.listenAddress().getPort();
        }

        @Override
        public void run(BooleanSupplier running) throws IOException, InterruptedException {
            if (!pair.accept(VerbsPair.CONNECT_WAIT_NS, running, RdmaWriteStream.CONTROL_BYTES,
                RdmaWriteStream.encodeTarget(targetMr))) {
                return;
            }
            while (pair.awaitRecv(running)) {
                long mismatches = RdmaWriteStream.countMismatches(target.buffer(), pair.recvBuffer());
                pair.sendBuffer().putLong(0, mismatches);
                pair.send(RdmaWriteStream.VERIFY_ANSWER_BYTES);
                pair.postRecv(RdmaWriteStream.CONTROL_BYTES);
            }
        }

        @Override
        public void close() throws IOException {
            try {
                // The region before its protection domain, which the pair closes.
                if (targetMr != null) {
                    targetMr.close();
                }
                if (target != null) {
                    target.close();
                }
                if (pair != null) {
                    pair.close();
                }
            } finally {
                if (device != null) {
                    device.close();
                }
            }
        }
    }
}
