package io.jsdp.bench.cli;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The measuring side: runs each scenario against a {@link Server} and hands every figure to a sink.
 * Time is {@link System#nanoTime()}; each point warms up for {@code warmupMs} (same code, same
 * connection) and then measures for {@code durationMs}.
 */
final class Client {
    /** Most latency samples kept per point (40 MB); a point ends early when they are full. */
    static final int MAX_SAMPLES = 5_000_000;
    /** Messages per burst and bytes per message of the progress test (seed 001 §4.4). */
    static final int BURST = 100;
    static final int BURST_MESSAGE_BYTES = 1024;

    private final Transport transport;
    private final boolean poll;
    private final String variant;
    private final String address;
    private final Options options;
    private final Consumer<Result> out;
    private final long[] samples;
    private boolean described;
    /** Non-zero while an event-loop JVM warm-up runs: each scenario's lead-in ({@link #warmEventLoop}). */
    private long warmingNs;
    private static final long WARMING_DURATION_NS = TimeUnit.MILLISECONDS.toNanos(100);

    Client(Transport transport, boolean poll, String variant, String address, Options options, Consumer<Result> out) {
        this.transport = transport;
        this.poll = poll;
        this.variant = variant;
        this.address = address;
        this.options = options;
        this.out = out;
        boolean latency = options.scenarios.contains(Scenario.RR) || options.scenarios.contains(Scenario.CONNECT)
            || options.scenarios.contains(Scenario.PROGRESS);
        this.samples = new long[latency ? MAX_SAMPLES : 0];
    }

    void runAll() throws IOException {
        if (options.io.eventLoop()) {
            runEventLoop();
            return;
        }
        warmJvm();
        for (Scenario s : options.scenarios) {
            switch (s) {
                case RR:
                    for (int size : options.sizes.get(s)) {
                        rr(size);
                    }
                    break;
                case STREAM:
                    for (int size : options.sizes.get(s)) {
                        stream(size);
                    }
                    break;
                case RATE:
                    for (int size : options.sizes.get(s)) {
                        rate(size);
                    }
                    break;
                case CONNECT:
                    connect();
                    break;
                case PROGRESS:
                    for (int us : options.computesUs) {
                        progress(us);
                    }
                    break;
                default:
                    throw new IllegalStateException(s.toString());
            }
        }
    }

    /**
     * {@code --io selector} and {@code netty}: every scenario through one event-loop thread
     * ({@link EventLoopClient}, {@link NettyClient}).
     */
    private void runEventLoop() throws IOException {
        EventLoopScenarios loop = options.io == Options.Io.NETTY ? new NettyClient(this, transport, address, options)
            : new EventLoopClient(this, transport, address, options);
        warmEventLoop(loop);
        for (Scenario s : options.scenarios) {
            runPoints(loop, s);
        }
    }

    /**
     * Before the first point of an event-loop mode: each scenario of the run at its first size, unmeasured,
     * through the same event loop, for {@code jvmWarmupMs} in all. The blocking warm-up ({@link #warmJvm})
     * would leave the event loop's path (the selector, Netty's pipeline, the channel's non-blocking calls)
     * for the JIT to compile during the first point's measured interval, where on 2 CPUs under load it took
     * seconds.
     */
    private void warmEventLoop(EventLoopScenarios loop) throws IOException {
        if (options.jvmWarmupMs == 0 || options.scenarios.isEmpty()) {
            return;
        }
        warmingNs = TimeUnit.MILLISECONDS.toNanos(options.jvmWarmupMs) / options.scenarios.size();
        try {
            for (Scenario s : options.scenarios) {
                int[] sizes = options.sizes.get(s);
                runPoint(loop, s, sizes == null || sizes.length == 0 ? 0 : sizes[0]);
            }
        } finally {
            warmingNs = 0;
        }
    }

    private void runPoints(EventLoopScenarios loop, Scenario s) throws IOException {
        if (s == Scenario.CONNECT) {
            loop.connect();
            return;
        }
        for (int size : options.sizes.get(s)) {
            runPoint(loop, s, size);
        }
    }

    private static void runPoint(EventLoopScenarios loop, Scenario s, int size) throws IOException {
        switch (s) {
            case RR:
                loop.rr(size);
                break;
            case STREAM:
                loop.stream(size);
                break;
            case RATE:
                loop.rate(size);
                break;
            case CONNECT:
                loop.connect();
                break;
            default:
                throw new IllegalStateException(s + " has no event-loop form");
        }
    }

    /** The latency sample store ({@link #latencies} reads its first n). */
    long[] samples() {
        return samples;
    }

    private Conn open() throws IOException {
        Conn c = new Conn(transport.connect(address, poll), poll);
        if (transport == Transport.SDP && !described) {
            described(Transport.describe(c.channel));
        }
        return c;
    }

    /** Reports how the run's first SDP connection travels ({@code SdpSocketOptions.TRANSPORT}), once. */
    synchronized void described(String how) {
        if (!described) {
            described = true;
            Worker.say(Worker.INFO + " sdp=" + how);
        }
    }

    /** A point's unmeasured lead-in; all of it while the JVM warms up ({@link #warmEventLoop}). */
    long warmupNs() {
        return warmingNs != 0 ? warmingNs : TimeUnit.MILLISECONDS.toNanos(options.warmupMs);
    }

    /** A point's measured interval; a short one, reported nowhere, while the JVM warms up. */
    long durationNs() {
        return warmingNs != 0 ? WARMING_DURATION_NS : TimeUnit.MILLISECONDS.toNanos(options.durationMs);
    }

    /** Results are dropped while the JVM warms up. */
    void emit(Scenario s, long size, String metric, double value, String unit) {
        if (warmingNs != 0) {
            return;
        }
        out.accept(new Result(s.id(), transport.id(), variant, size, metric, value, unit));
    }

    /** Emits p50/p90/p99/p99.9/mean/interquartile mean/max in µs and the sample count of the first {@code n} samples. */
    void latencies(Scenario s, long size, int n) {
        if (warmingNs != 0) {
            return;
        }
        Arrays.sort(samples, 0, n);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += samples[i];
        }
        emit(s, size, "p50_us", samples[index(n, 0.50)] / 1e3, "us");
        emit(s, size, "p90_us", samples[index(n, 0.90)] / 1e3, "us");
        emit(s, size, "p99_us", samples[index(n, 0.99)] / 1e3, "us");
        emit(s, size, "p999_us", samples[index(n, 0.999)] / 1e3, "us");
        emit(s, size, "mean_us", sum / n / 1e3, "us");
        emit(s, size, "iqmean_us", interquartileMean(samples, n) / 1e3, "us");
        emit(s, size, "max_us", samples[n - 1] / 1e3, "us");
        emit(s, size, "samples", n, "count");
    }

    /**
     * The mean of the middle half of the first {@code n} sorted samples (p25 … p75): as fine as the mean
     * (no 10 ns histogram steps), but not moved by the descheduled round trips a shared machine adds.
     */
    static double interquartileMean(long[] sorted, int n) {
        int lo = index(n, 0.25);
        int hi = index(n, 0.75);
        double sum = 0;
        for (int i = lo; i <= hi; i++) {
            sum += sorted[i];
        }
        return sum / (hi - lo + 1);
    }

    private static int index(int n, double q) {
        return (int) Math.min(n - 1, Math.round(q * (n - 1)));
    }

    /**
     * Before the first point: a stream, then round trips, for {@code jvmWarmupMs}, unmeasured, so the JIT
     * compilers of both JVMs are done before measuring (on 2 CPUs they compete with the two spinning
     * sides and spoil the first point otherwise).
     */
    private void warmJvm() throws IOException {
        long half = TimeUnit.MILLISECONDS.toNanos(options.jvmWarmupMs) / 2;
        if (half == 0) {
            return;
        }
        try (Conn c = open()) {
            c.writeHeader(Conn.SINK, 16384, 0, 0);
            ByteBuffer b = Conn.allocate(16384, options.direct);
            long end = System.nanoTime() + half;
            while (System.nanoTime() - end < 0) {
                b.clear();
                c.writeFully(b);
            }
            c.channel.shutdownOutput();
            if (!c.readFully(ByteBuffer.allocate(8))) {
                throw new IOException("warm-up stream: no byte count from the server");
            }
        }
        try (Conn c = open()) {
            c.writeHeader(Conn.ECHO, 64, 0, 0);
            ByteBuffer b = Conn.allocate(64, options.direct);
            long end = System.nanoTime() + half;
            while (System.nanoTime() - end < 0) {
                roundTrip(c, b);
            }
        }
    }

    /** Round trips of {@code size} bytes; checks the first echo byte for byte. */
    void rr(int size) throws IOException {
        try (Conn c = open()) {
            c.writeHeader(Conn.ECHO, size, 0, 0);
            ByteBuffer b = Conn.allocate(size, options.direct);
            for (int i = 0; i < size; i++) {
                b.put(i, (byte) (i * 31 + 7));
            }
            ByteBuffer expect = ByteBuffer.allocate(size);
            expect.put(b.duplicate()).flip();
            roundTrip(c, b);
            b.clear();
            if (!b.equals(expect)) {
                throw new IOException("rr: the echo differs from what was sent (" + transport.id() + ")");
            }
            long end = System.nanoTime() + warmupNs();
            while (System.nanoTime() - end < 0) {
                roundTrip(c, b);
            }
            int n = 0;
            CpuMeter cpu = CpuMeter.start(options.loadPid);
            end = System.nanoTime() + durationNs();
            while (n < samples.length) {
                long t0 = System.nanoTime();
                roundTrip(c, b);
                long t1 = System.nanoTime();
                samples[n++] = t1 - t0;
                if (t1 - end >= 0) {
                    break;
                }
            }
            emit(Scenario.RR, size, "cpu_per_op_us", cpu.perOpUs(n), "us");
            latencies(Scenario.RR, size, n);
        }
    }

    private static void roundTrip(Conn c, ByteBuffer b) throws IOException {
        b.clear();
        c.writeFully(b);
        b.clear();
        if (!c.readFully(b)) {
            throw new IOException("the server closed during a round trip");
        }
    }

    /**
     * One-way writes of {@code size} bytes. The measured interval runs from the end of the warm-up to
     * the server's answer after EOF, and counts the bytes the server received after the warm-up, so
     * data still buffered when the writer stops is neither lost nor free.
     */
    void stream(int size) throws IOException {
        try (Conn c = open()) {
            if (options.streamNagle && transport != Transport.UDS) {
                // Nagle's rule for the bulk writer (SDP: a partly filled slot waits for the one in flight)
                c.channel.setOption(StandardSocketOptions.TCP_NODELAY, false);
            }
            c.writeHeader(Conn.SINK, size, options.streamReadBytes, 0); // the reader's buffer, 0: the write size
            ByteBuffer b = Conn.allocate(size, options.direct);
            long written = 0;
            long end = System.nanoTime() + warmupNs();
            while (System.nanoTime() - end < 0) {
                b.clear();
                c.writeFully(b);
                written += size;
            }
            CpuMeter cpu = CpuMeter.start(options.loadPid);
            long t0 = System.nanoTime();
            end = t0 + durationNs();
            while (System.nanoTime() - end < 0) {
                b.clear();
                c.writeFully(b);
            }
            c.channel.shutdownOutput();
            ByteBuffer answer = ByteBuffer.allocate(8);
            if (!c.readFully(answer)) {
                throw new IOException("stream: no byte count from the server");
            }
            long t1 = System.nanoTime();
            long delivered = answer.getLong(0) - written;
            double seconds = (t1 - t0) / 1e9;
            emit(Scenario.STREAM, size, "gbps", delivered * 8 / 1e9 / seconds, "Gbit/s");
            emit(Scenario.STREAM, size, "msgs_per_s", delivered / (double) size / seconds, "1/s");
            emit(Scenario.STREAM, size, "cpu_per_op_us", cpu.perOpUs(delivered / (double) size), "us");
        }
    }

    /** {@code window} echoed requests of {@code size} bytes in flight; responses per second. */
    void rate(int size) throws IOException {
        try (Conn c = open()) {
            c.writeHeader(Conn.ECHO, size, 0, 0);
            ByteBuffer req = Conn.allocate(size, options.direct);
            ByteBuffer resp = Conn.allocate(size, options.direct);
            for (int i = 0; i < options.window; i++) {
                req.clear();
                c.writeFully(req);
            }
            long end = System.nanoTime() + warmupNs();
            while (System.nanoTime() - end < 0) {
                exchange(c, req, resp);
            }
            long count = 0;
            CpuMeter cpu = CpuMeter.start(options.loadPid);
            long t0 = System.nanoTime();
            end = t0 + durationNs();
            long t1;
            do {
                exchange(c, req, resp);
                count++;
            } while ((t1 = System.nanoTime()) - end < 0);
            double perOp = cpu.perOpUs(count);
            for (int i = 0; i < options.window; i++) {
                resp.clear();
                if (!c.readFully(resp)) {
                    throw new IOException("rate: the server closed with requests in flight");
                }
            }
            emit(Scenario.RATE, size, "msgs_per_s", count / ((t1 - t0) / 1e9), "1/s");
            emit(Scenario.RATE, size, "cpu_per_op_us", perOp, "us");
        }
    }

    private static void exchange(Conn c, ByteBuffer req, ByteBuffer resp) throws IOException {
        resp.clear();
        if (!c.readFully(resp)) {
            throw new IOException("rate: the server closed");
        }
        req.clear();
        c.writeFully(req);
    }

    /** Connections opened, used for one exchange and closed, one after another. */
    void connect() throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        long end = System.nanoTime() + warmupNs();
        while (System.nanoTime() - end < 0) {
            connectOnce(one);
        }
        int n = 0;
        CpuMeter cpu = CpuMeter.start(options.loadPid);
        long t0 = System.nanoTime();
        end = t0 + durationNs();
        long t1;
        do {
            long s = System.nanoTime();
            connectOnce(one);
            t1 = System.nanoTime();
            samples[n++] = t1 - s;
        } while (t1 - end < 0 && n < samples.length);
        emit(Scenario.CONNECT, Conn.HEADER_BYTES, "conns_per_s", n / ((t1 - t0) / 1e9), "1/s");
        emit(Scenario.CONNECT, Conn.HEADER_BYTES, "cpu_per_op_us", cpu.perOpUs(n), "us");
        latencies(Scenario.CONNECT, Conn.HEADER_BYTES, n);
    }

    private void connectOnce(ByteBuffer one) throws IOException {
        try (Conn c = open()) {
            c.writeHeader(Conn.CONNECT, 1, 0, 0);
            one.clear();
            if (!c.readFully(one)) {
                throw new IOException("connect: the server closed before answering");
            }
        }
    }

    /**
     * The communication-progress test: send a burst of {@link #BURST} × {@link #BURST_MESSAGE_BYTES},
     * compute {@code computeUs}, receive the server's burst (which it sends after receiving ours and
     * computing as long); one sample per iteration.
     */
    void progress(int computeUs) throws IOException {
        long computeNs = TimeUnit.MICROSECONDS.toNanos(computeUs);
        try (Conn c = open()) {
            c.writeHeader(Conn.PROGRESS, BURST_MESSAGE_BYTES, BURST, (int) computeNs);
            ByteBuffer b = Conn.allocate(BURST_MESSAGE_BYTES, options.direct);
            long end = System.nanoTime() + warmupNs();
            while (System.nanoTime() - end < 0) {
                burst(c, b, computeNs);
            }
            int n = 0;
            end = System.nanoTime() + durationNs();
            while (n < samples.length) {
                long t0 = System.nanoTime();
                burst(c, b, computeNs);
                long t1 = System.nanoTime();
                samples[n++] = t1 - t0;
                if (t1 - end >= 0) {
                    break;
                }
            }
            latencies(Scenario.PROGRESS, computeUs, n);
        }
    }

    private static void burst(Conn c, ByteBuffer b, long computeNs) throws IOException {
        for (int i = 0; i < BURST; i++) {
            b.clear();
            c.writeFully(b);
        }
        Conn.compute(computeNs);
        for (int i = 0; i < BURST; i++) {
            b.clear();
            if (!c.readFully(b)) {
                throw new IOException("progress: the server closed");
            }
        }
    }
}
