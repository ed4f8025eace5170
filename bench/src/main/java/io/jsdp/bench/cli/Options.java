package io.jsdp.bench.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The command line: {@code <scenario>[,<scenario>…]|all [options]}. Parsing validates everything
 * (an unknown scenario, transport, variant or option, or a bad number, fails with the reason before
 * anything runs). {@link #childArgs} turns the measurement settings back into arguments for the
 * worker JVMs, which parse them with the same code.
 */
final class Options {
    static final String USAGE = String.join("\n",
        "usage: java -jar bench/target/jsdp-bench.jar <scenario>[,<scenario>...]|all [options]",
        "scenarios: rr, stream, rate, connect, progress (all = every one)",
        "options:",
        "  --transports LIST    tcp,tcp-poll,uds,sdp (default: all four; no uds with --io netty)",
        "  --sdp-variants LIST  SDP variants from the registry (default: credit,spin0,bcopy,zcopy, and with stream",
        "                       or progress also packetized,nic,credit-thesis: issue 8's flow-control comparison;",
        "                       --list-variants)",
        "  --sizes LIST         message sizes in bytes for rr, stream and rate (default per scenario)",
        "  --computes LIST      progress: computation between send and receive, in µs (default 0,10,50,100,200,500)",
        "  --warmup-ms N        warm-up per measurement point (default 1000; --quick 150)",
        "  --duration-ms N      measured time per point (default 3000; --quick 250)",
        "  --jvm-warmup-ms N    unmeasured traffic on the measured I/O path before the first point (default 3000; --quick 2000)",
        "  --stream-nagle       stream: the writer without TCP_NODELAY (Nagle's rule; SDP coalesces) (default: TCP_NODELAY on everywhere)",
        "  --stream-read-bytes N  stream: the reader's buffer (netperf's -M; e.g. 65536, the socket buffer) (default: the write size)",
        "  --window N           rate: requests in flight (default 16)",
        "  --buffer heap|direct the application's read/write buffers (default direct)",
        "  --io blocking|selector|netty  how both ends do I/O: a thread per connection on blocking channels (default),",
        "                       one event-loop thread per side on a Selector serving --connections non-blocking",
        "                       connections with a JDK Pipe registered in the same selector, or a Netty 4.2 client and",
        "                       server on Netty's NIO transport, one event-loop thread each (rr, stream, rate, connect)",
        "  --connections N      --io selector and netty: connections each side's event loop serves at once (default 64)",
        "  --load N             N busy loops in a separate JVM (nice 0, unpinned) during every series (default 0)",
        "  --one-jvm            client and server in one JVM (default: two, the CLI starts both)",
        "  --pin                taskset: client JVM on CPU 0, server JVM on CPU 1 (one JVM: CPUs 0,1)",
        "  --jvm-arg ARG        an extra option for the worker JVMs (repeatable), e.g. -Xmx1g",
        "  --rounds N           A/B: rr or stream alone; N rounds, each running A and B (alternating which goes",
        "                       first), each in fresh JVMs; per round the latencies (rr) or throughputs (stream) and",
        "                       B/A, at the end the median ratio",
        "                       with min/max and a bootstrap 95 % interval. A and B: the run's two series",
        "                       (e.g. --transports sdp --sdp-variants credit-notrace,credit), or its one series and",
        "                       that series with --ab-jvm-arg",
        "  --ab-jvm-arg ARG     with --rounds: B is the one series with ARG added to both JVMs (repeatable)",
        "  --forks N            run every series N times, each time in fresh JVMs, the series taking turns",
        "                       (all series, then all again); every figure is the median of its N values, and the",
        "                       report gives their spread (default 1)",
        "  --quick              short points, fewer progress points: all scenarios in well under 2 minutes",
        "  --csv FILE           rows scenario,transport,variant,size_bytes,metric,value,unit",
        "  --report DIR         report.md, results.csv and PNG plots in DIR",
        "  --list-variants      print the SDP variant registry and exit",
        "  --help               this text");

    /** Internal: the sizes of every scenario, from the CLI to its workers ({@link #sizesSpec}). */
    static final String SIZES_SPEC = "--sizes-spec";
    /** Internal: the {@code --load} process's pid, from the CLI to a client, whose CPU figures leave it out. */
    static final String LOAD_PID = "--load-pid";

    /** How both ends of a connection do their I/O ({@code --io}). */
    enum Io {
        /** A thread per connection blocked in read and write (or busy-polling, per transport/variant). */
        BLOCKING,
        /** One event-loop thread per side: non-blocking channels on a {@link java.nio.channels.Selector}. */
        SELECTOR,
        /** A Netty 4.2 client and server on Netty's NIO transport, one event-loop thread per side. */
        NETTY;

        /** Whether both sides run one event loop serving {@code --connections} connections. */
        boolean eventLoop() {
            return this != BLOCKING;
        }

        String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Io parse(String s) {
            for (Io io : values()) {
                if (io.id().equals(s)) {
                    return io;
                }
            }
            throw new IllegalArgumentException("--io takes blocking, selector or netty, not '" + s + "'");
        }
    }

    final List<Scenario> scenarios;
    final List<Transport> transports;
    final List<SdpVariant> sdpVariants;
    final Map<Scenario, int[]> sizes;
    final int[] computesUs;
    final long warmupMs;
    final long durationMs;
    final long jvmWarmupMs;
    final int window;
    final boolean streamNagle;
    /** {@code stream}: the reader's buffer size; 0: the write size. */
    final int streamReadBytes;
    final boolean direct;
    final boolean oneJvm;
    final boolean pin;
    final boolean quick;
    final List<String> jvmArgs;
    final Io io;
    /** {@code --io selector} and {@code netty}: connections served at once by each side's event loop. */
    final int connections;
    /** Busy loops of the foreign-load process; 0: none. */
    final int load;
    /** In a client: the load process's pid (0: none). */
    final long loadPid;
    /** A/B rounds; 0: not an A/B run. */
    final int rounds;
    /** With {@link #rounds}: B's extra JVM arguments, or empty when B is the run's second series. */
    final List<String> abJvmArgs;
    /** Launches of every series; the figures are medians over them. */
    final int forks;
    final Path csv;
    final Path report;
    final boolean listVariants;
    final boolean help;

    private Options(Builder b) {
        scenarios = List.copyOf(b.scenarios);
        transports = List.copyOf(b.transports);
        sdpVariants = List.copyOf(b.sdpVariants);
        sizes = b.sizes;
        computesUs = b.computesUs;
        warmupMs = b.warmupMs;
        durationMs = b.durationMs;
        jvmWarmupMs = b.jvmWarmupMs;
        window = b.window;
        streamNagle = b.streamNagle;
        streamReadBytes = b.streamReadBytes;
        direct = b.direct;
        oneJvm = b.oneJvm;
        pin = b.pin;
        quick = b.quick;
        jvmArgs = List.copyOf(b.jvmArgs);
        io = b.io;
        connections = b.connections;
        load = b.load;
        loadPid = b.loadPid;
        rounds = b.rounds;
        abJvmArgs = List.copyOf(b.abJvmArgs);
        forks = b.forks;
        csv = b.csv;
        report = b.report;
        listVariants = b.listVariants;
        help = b.help;
    }

    /**
     * Parses a command line.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    static Options parse(String... args) {
        Builder b = new Builder();
        int i = 0;
        if (args.length > 0 && !args[0].startsWith("--")) {
            for (String s : args[0].split(",")) {
                if (s.equals("all")) {
                    b.scenarios.addAll(Arrays.asList(Scenario.values()));
                } else {
                    b.scenarios.add(Scenario.parse(s));
                }
            }
            i = 1;
        }
        int[] sizes = null;
        int[] computes = null;
        Map<Scenario, int[]> sizesSpec = null;
        Long warmup = null;
        Long duration = null;
        Long jvmWarmup = null;
        List<Transport> transports = null;
        List<SdpVariant> variants = null;
        for (; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--transports":
                    transports = new ArrayList<>();
                    for (String s : value(args, ++i, a).split(",")) {
                        Transport t = Transport.parse(s);
                        if (!transports.contains(t)) {
                            transports.add(t);
                        }
                    }
                    break;
                case "--sdp-variants":
                    variants = new ArrayList<>();
                    for (String s : value(args, ++i, a).split(",")) {
                        SdpVariant v = SdpVariant.named(s);
                        if (!variants.contains(v)) {
                            variants.add(v);
                        }
                    }
                    break;
                case "--sizes":
                    sizes = ints(value(args, ++i, a), a, 1, 64 << 20);
                    break;
                case SIZES_SPEC:
                    sizesSpec = parseSizes(value(args, ++i, a));
                    break;
                case "--computes":
                    computes = ints(value(args, ++i, a), a, 0, 10_000_000);
                    break;
                case "--warmup-ms":
                    warmup = (long) ints(value(args, ++i, a), a, 0, 600_000)[0];
                    break;
                case "--jvm-warmup-ms":
                    jvmWarmup = (long) ints(value(args, ++i, a), a, 0, 600_000)[0];
                    break;
                case "--duration-ms":
                    duration = (long) ints(value(args, ++i, a), a, 1, 3_600_000)[0];
                    break;
                case "--window":
                    b.window = ints(value(args, ++i, a), a, 1, 4096)[0];
                    break;
                case "--buffer": {
                    String v = value(args, ++i, a);
                    if (!v.equals("heap") && !v.equals("direct")) {
                        throw new IllegalArgumentException("--buffer takes heap or direct, not '" + v + "'");
                    }
                    b.direct = v.equals("direct");
                    break;
                }
                case "--stream-nagle":
                    b.streamNagle = true;
                    break;
                case "--stream-read-bytes":
                    b.streamReadBytes = ints(value(args, ++i, a), a, 1, 1 << 30)[0];
                    break;
                case "--io":
                    b.io = Io.parse(value(args, ++i, a));
                    break;
                case "--connections":
                    b.connections = ints(value(args, ++i, a), a, 1, 4096)[0];
                    break;
                case "--load":
                    b.load = ints(value(args, ++i, a), a, 0, 64)[0];
                    break;
                case LOAD_PID:
                    b.loadPid = Long.parseLong(value(args, ++i, a));
                    break;
                case "--one-jvm":
                    b.oneJvm = true;
                    break;
                case "--pin":
                    b.pin = true;
                    break;
                case "--quick":
                    b.quick = true;
                    break;
                case "--jvm-arg":
                    b.jvmArgs.add(value(args, ++i, a));
                    break;
                case "--rounds":
                    b.rounds = ints(value(args, ++i, a), a, 1, 1000)[0];
                    break;
                case "--ab-jvm-arg":
                    b.abJvmArgs.add(value(args, ++i, a));
                    break;
                case "--forks":
                    b.forks = ints(value(args, ++i, a), a, 1, 100)[0];
                    break;
                case "--csv":
                    b.csv = Path.of(value(args, ++i, a));
                    break;
                case "--report":
                    b.report = Path.of(value(args, ++i, a));
                    break;
                case "--list-variants":
                    b.listVariants = true;
                    break;
                case "--help":
                case "-h":
                    b.help = true;
                    break;
                default:
                    throw new IllegalArgumentException("unknown option '" + a + "'");
            }
        }
        if (b.scenarios.isEmpty() && !b.help && !b.listVariants) {
            throw new IllegalArgumentException("no scenario given");
        }
        if (b.io == Io.NETTY && transports != null && transports.contains(Transport.UDS)) {
            // Netty's NIO transport closes a Unix-domain channel at the peer's shutdownOutput (it half-closes
            // only Internet ones), and stream's sink answers after it
            throw new IllegalArgumentException("--io netty runs tcp, tcp-poll and sdp: Netty's NIO transport does not"
                + " half-close Unix-domain channels");
        }
        b.transports.addAll(transports != null ? transports : Arrays.stream(Transport.values())
            .filter(t -> b.io != Io.NETTY || t != Transport.UDS).collect(java.util.stream.Collectors.toList()));
        if (variants != null) {
            b.sdpVariants.addAll(variants);
        } else {
            b.sdpVariants.addAll(List.of(SdpVariant.named(SdpVariant.DEFAULT), SdpVariant.named(SdpVariant.BLOCKING),
                SdpVariant.named(SdpVariant.BCOPY), SdpVariant.named(SdpVariant.ZCOPY)));
            if (b.scenarios.contains(Scenario.STREAM) || b.scenarios.contains(Scenario.PROGRESS)) {
                // the flow-control schemes side by side (issue 8), with the thesis' credit-based scheme as a second baseline
                b.sdpVariants.addAll(List.of(SdpVariant.named("packetized"), SdpVariant.named("nic"),
                    SdpVariant.named(SdpVariant.CREDIT_THESIS)));
            }
        }
        for (Scenario s : Scenario.values()) {
            if (sizesSpec != null && sizesSpec.containsKey(s)) {
                b.sizes.put(s, sizesSpec.get(s));
                continue;
            }
            b.sizes.put(s, sizes != null && s != Scenario.CONNECT && s != Scenario.PROGRESS ? sizes : s.defaultSizes());
        }
        b.computesUs = computes != null ? computes : b.quick ? new int[] {0, 50, 200} : new int[] {0, 10, 50, 100, 200, 500};
        b.warmupMs = warmup != null ? warmup : b.quick ? 150 : 1000;
        b.jvmWarmupMs = jvmWarmup != null ? jvmWarmup : b.quick ? 2000 : 3000;
        b.durationMs = duration != null ? duration : b.quick ? 250 : 3000;
        checkAb(b);
        if (b.io.eventLoop() && b.scenarios.contains(Scenario.PROGRESS)) {
            throw new IllegalArgumentException("--io " + b.io.id() + " runs rr, stream, rate and connect; progress is a"
                + " blocking test (seed 001 §4.4): run it with --io blocking");
        }
        return new Options(b);
    }

    /** The A/B settings: rr alone, exactly two arms, no report (its tables assume one run per series). */
    private static void checkAb(Builder b) {
        if (b.rounds == 0) {
            if (!b.abJvmArgs.isEmpty()) {
                throw new IllegalArgumentException("--ab-jvm-arg needs --rounds");
            }
            return;
        }
        if (!b.scenarios.equals(Set.of(Scenario.RR)) && !b.scenarios.equals(Set.of(Scenario.STREAM))) {
            throw new IllegalArgumentException("--rounds compares rr latencies or stream throughputs: give rr or stream alone");
        }
        if (b.report != null) {
            throw new IllegalArgumentException("--rounds writes no --report (use --csv)");
        }
        if (b.forks > 1) {
            throw new IllegalArgumentException("--rounds runs each arm in fresh JVMs already: no --forks");
        }
        int series = 0;
        for (Transport t : b.transports) {
            series += t == Transport.SDP ? b.sdpVariants.size() : 1;
        }
        int wanted = b.abJvmArgs.isEmpty() ? 2 : 1;
        if (series != wanted) {
            throw new IllegalArgumentException("--rounds compares two arms: give " + (wanted == 2
                ? "two series (transports x SDP variants), e.g. --transports sdp --sdp-variants credit-notrace,credit"
                : "one series (transports x SDP variants) with --ab-jvm-arg") + "; this run has " + series);
        }
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static int[] ints(String list, String option, int min, int max) {
        String[] parts = list.split(",");
        int[] out = new int[parts.length];
        for (int k = 0; k < parts.length; k++) {
            try {
                out[k] = Integer.parseInt(parts[k].trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": '" + parts[k] + "' is not a number");
            }
            if (out[k] < min || out[k] > max) {
                throw new IllegalArgumentException(option + ": " + out[k] + " is outside " + min + " … " + max);
            }
        }
        return out;
    }

    /** The scenarios and measurement settings, as arguments a worker parses with {@link #parse}. */
    List<String> childArgs() {
        List<String> out = new ArrayList<>();
        StringBuilder sc = new StringBuilder();
        for (Scenario s : scenarios) {
            sc.append(sc.length() == 0 ? "" : ",").append(s.id());
        }
        out.add(sc.toString());
        out.add("--computes");
        out.add(join(computesUs));
        out.add("--warmup-ms");
        out.add(Long.toString(warmupMs));
        out.add("--duration-ms");
        out.add(Long.toString(durationMs));
        out.add("--jvm-warmup-ms");
        out.add(Long.toString(jvmWarmupMs));
        out.add("--window");
        out.add(Integer.toString(window));
        out.add("--buffer");
        out.add(direct ? "direct" : "heap");
        out.add("--io");
        out.add(io.id());
        out.add("--connections");
        out.add(Integer.toString(connections));
        if (streamNagle) {
            out.add("--stream-nagle");
        }
        if (streamReadBytes > 0) {
            out.add("--stream-read-bytes");
            out.add(Integer.toString(streamReadBytes));
        }
        out.add(SIZES_SPEC);
        out.add(sizesSpec());
        return out;
    }

    /** Sizes per scenario, {@code rr=1:64;stream=...}, for a worker ({@link #parseSizes}). */
    String sizesSpec() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Scenario, int[]> e : sizes.entrySet()) {
            sb.append(sb.length() == 0 ? "" : ";").append(e.getKey().id()).append('=')
                .append(join(e.getValue()).replace(',', ':'));
        }
        return sb.toString();
    }

    /** Reverses {@link #sizesSpec}. */
    static Map<Scenario, int[]> parseSizes(String spec) {
        Map<Scenario, int[]> out = new EnumMap<>(Scenario.class);
        for (String part : spec.split(";")) {
            String[] kv = part.split("=", 2);
            out.put(Scenario.parse(kv[0]), ints(kv[1].replace(':', ','), "sizes", 1, 64 << 20));
        }
        return out;
    }

    static String join(int[] v) {
        StringBuilder sb = new StringBuilder();
        for (int x : v) {
            sb.append(sb.length() == 0 ? "" : ",").append(x);
        }
        return sb.toString();
    }

    private static final class Builder {
        final Set<Scenario> scenarios = new LinkedHashSet<>();
        final List<Transport> transports = new ArrayList<>();
        final List<SdpVariant> sdpVariants = new ArrayList<>();
        final Map<Scenario, int[]> sizes = new EnumMap<>(Scenario.class);
        int[] computesUs;
        long warmupMs;
        long durationMs;
        long jvmWarmupMs;
        int window = 16;
        boolean streamNagle;
        int streamReadBytes;
        boolean direct = true;
        boolean oneJvm;
        boolean pin;
        boolean quick;
        final List<String> jvmArgs = new ArrayList<>();
        Io io = Io.BLOCKING;
        int connections = 64;
        int load;
        long loadPid;
        int rounds;
        final List<String> abJvmArgs = new ArrayList<>();
        int forks = 1;
        Path csv;
        Path report;
        boolean listVariants;
        boolean help;
    }
}
