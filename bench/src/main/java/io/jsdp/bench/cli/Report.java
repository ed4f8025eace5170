package io.jsdp.bench.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The text summary, the markdown report with its ratio-to-{@code tcp} column, the targets
 * (met or missed, computed from the run), and the plots ({@link Plot}).
 */
final class Report {
    private Report() {
    }

    /** The figure each scenario is compared on, and whether lower is better. */
    static String mainMetric(String scenario) {
        switch (scenario) {
            case "stream":
                return "gbps";
            case "rate":
                return "msgs_per_s";
            case "connect":
                return "conns_per_s";
            default:
                return "p50_us";
        }
    }

    static boolean lowerIsBetter(String metric) {
        return metric.endsWith("_us");
    }

    /** The value of one figure, or NaN when the run has none. */
    static double value(List<Result> rs, String scenario, String series, long size, String metric) {
        for (Result r : rs) {
            if (r.scenario().equals(scenario) && r.series().equals(series) && r.size() == size && r.metric().equals(metric)) {
                return r.value();
            }
        }
        return Double.NaN;
    }

    /**
     * How many times better than {@code tcp} a figure is (higher is better: {@code value / tcp};
     * latency: {@code tcp / value}); NaN without a tcp figure.
     */
    static double vsTcp(List<Result> rs, Result r) {
        double tcp = value(rs, r.scenario(), Transport.TCP.id(), r.size(), r.metric());
        if (Double.isNaN(tcp) || tcp == 0 || r.value() == 0) {
            return Double.NaN;
        }
        return lowerIsBetter(r.metric()) ? tcp / r.value() : r.value() / tcp;
    }

    static List<String> scenarios(List<Result> rs) {
        Set<String> s = new LinkedHashSet<>();
        rs.forEach(r -> s.add(r.scenario()));
        return new ArrayList<>(s);
    }

    static List<String> series(List<Result> rs, String scenario) {
        Set<String> s = new LinkedHashSet<>();
        rs.stream().filter(r -> r.scenario().equals(scenario)).forEach(r -> s.add(r.series()));
        return new ArrayList<>(s);
    }

    static List<Long> sizes(List<Result> rs, String scenario) {
        Set<Long> s = new TreeSet<>();
        rs.stream().filter(r -> r.scenario().equals(scenario)).forEach(r -> s.add(r.size()));
        return new ArrayList<>(s);
    }

    static String sizeLabel(String scenario, long size) {
        if (scenario.equals("progress")) {
            return size + " µs";
        }
        if (size >= 1 << 20 && size % (1 << 20) == 0) {
            return (size >> 20) + " MiB";
        }
        if (size >= 1024 && size % 1024 == 0) {
            return (size >> 10) + " KiB";
        }
        return size + " B";
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** One line per scenario and series: the main figure at each size. */
    static String summary(List<Result> rs) {
        StringBuilder sb = new StringBuilder();
        for (String sc : scenarios(rs)) {
            String metric = mainMetric(sc);
            List<Long> sizes = sizes(rs, sc);
            sb.append(String.format(Locale.ROOT, "%-9s %-16s", sc, metric));
            for (long size : sizes) {
                sb.append(String.format(Locale.ROOT, " %12s", sizeLabel(sc, size)));
            }
            sb.append('\n');
            for (String series : series(rs, sc)) {
                sb.append(String.format(Locale.ROOT, "%-9s %-16s", "", series));
                for (long size : sizes) {
                    sb.append(String.format(Locale.ROOT, " %12s", num(value(rs, sc, series, size, metric))));
                }
                sb.append('\n');
            }
        }
        sb.append(targets(rs).isEmpty() ? "" : "targets:\n");
        for (Target t : targets(rs)) {
            sb.append("  ").append(t.verdict()).append("  ").append(t.what).append(": ").append(t.evidence).append('\n');
        }
        List<Target> fc = flowControlTargets(rs);
        sb.append(fc.isEmpty() ? "" : "flow control (issue 8, seed 001 ch. 4):\n");
        for (Target t : fc) {
            sb.append("  ").append(t.verdict()).append("  ").append(t.what).append(": ").append(t.evidence).append('\n');
        }
        return sb.toString();
    }

    /** One of issue 7's targets, judged on this run's figures. */
    static final class Target {
        final String what;
        /** TRUE met, FALSE missed, null not measured in this run. */
        final Boolean met;
        final String evidence;

        Target(String what, Boolean met, String evidence) {
            this.what = what;
            this.met = met;
            this.evidence = evidence;
        }

        String verdict() {
            return met == null ? "not measured" : met ? "MET" : "MISSED";
        }
    }

    private static final String SDP_SPIN = "sdp/" + SdpVariant.DEFAULT;
    private static final String SDP_BLOCK = "sdp/" + SdpVariant.BLOCKING;

    /** The targets, computed from what the run measured. */
    static List<Target> targets(List<Result> rs) {
        List<Target> out = new ArrayList<>();
        double sdp64 = value(rs, "rr", SDP_SPIN, 64, "p50_us");
        double tcpPoll64 = value(rs, "rr", "tcp-poll", 64, "p50_us");
        double tcp64 = value(rs, "rr", "tcp", 64, "p50_us");
        out.add(judge("64 B rr p50 ≤ 2 µs, SDP spinning (" + SDP_SPIN + ")", sdp64, Double.NaN,
            sdp64 <= 2.0, String.format(Locale.ROOT, "p50 %s µs", num(sdp64))));
        out.add(judge("64 B rr p50 ≥ 5× better than tcp-poll", sdp64, tcpPoll64, tcpPoll64 / sdp64 >= 5,
            String.format(Locale.ROOT, "tcp-poll %s µs / sdp %s µs = %s×", num(tcpPoll64), num(sdp64), num(tcpPoll64 / sdp64))));
        out.add(judge("64 B rr p50 ≥ 30× better than tcp", sdp64, tcp64, tcp64 / sdp64 >= 30,
            String.format(Locale.ROOT, "tcp %s µs / sdp %s µs = %s×", num(tcp64), num(sdp64), num(tcp64 / sdp64))));
        double s64k = value(rs, "stream", SDP_SPIN, 65536, "gbps");
        double t64k = value(rs, "stream", "tcp", 65536, "gbps");
        out.add(judge("64 KiB stream ≥ 2× tcp", s64k, t64k, s64k / t64k >= 2,
            String.format(Locale.ROOT, "sdp %s / tcp %s Gbit/s = %s×", num(s64k), num(t64k), num(s64k / t64k))));
        double s64 = value(rs, "stream", SDP_SPIN, 64, "gbps");
        double t64 = value(rs, "stream", "tcp", 64, "gbps");
        out.add(judge("64 B stream ≥ 10× tcp", s64, t64, s64 / t64 >= 10,
            String.format(Locale.ROOT, "sdp %s / tcp %s Gbit/s = %s×", num(s64), num(t64), num(s64 / t64))));
        double b64 = value(rs, "rr", SDP_BLOCK, 64, "p50_us");
        double uds64 = value(rs, "rr", "uds", 64, "p50_us");
        out.add(judge("blocking rr (" + SDP_BLOCK + ", 64 B p50) no worse than uds", b64, uds64, b64 <= uds64,
            String.format(Locale.ROOT, "sdp %s µs vs uds %s µs", num(b64), num(uds64))));
        double sc = value(rs, "connect", SDP_SPIN, Conn.HEADER_BYTES, "conns_per_s");
        double tc = value(rs, "connect", "tcp", Conn.HEADER_BYTES, "conns_per_s");
        out.add(judge("connect ≥ ½ tcp's rate", sc, tc, sc >= tc / 2,
            String.format(Locale.ROOT, "sdp %s / tcp %s conns/s = %s×", num(sc), num(tc), num(sc / tc))));
        return out;
    }

    private static final String FC_CREDIT = "sdp/credit";
    private static final String FC_CREDIT_THESIS = "sdp/" + SdpVariant.CREDIT_THESIS;
    private static final String FC_PACKETIZED = "sdp/packetized";
    private static final String FC_NIC = "sdp/nic";

    /**
     * Issue 8's ordering of the flow-control schemes (seed 001 ch. 4), judged on the run's figures of the
     * {@code credit}, {@code packetized} and {@code nic} variants; empty unless the run has all three.
     * When the run also has {@code credit-thesis} (credit-based without coalescing, the thesis' own
     * scheme), the same checks follow with it as the credit-based scheme, each naming it.
     */
    static List<Target> flowControlTargets(List<Result> rs) {
        List<Target> out = flowControlTargets(rs, FC_CREDIT);
        out.addAll(flowControlTargets(rs, FC_CREDIT_THESIS));
        return out;
    }

    private static List<Target> flowControlTargets(List<Result> rs, String credit) {
        List<Target> out = new ArrayList<>();
        boolean all = false;
        for (String sc : scenarios(rs)) {
            List<String> series = series(rs, sc);
            all |= series.contains(credit) && series.contains(FC_PACKETIZED) && series.contains(FC_NIC);
        }
        if (!all) {
            return out;
        }
        String which = credit.equals(FC_CREDIT) ? "" : " [credit-based = " + credit + "]";
        double worst = Double.NaN;
        long worstSize = -1;
        for (long size : sizes(rs, "rr")) {
            double c = value(rs, "rr", credit, size, "p50_us");
            double p = value(rs, "rr", FC_PACKETIZED, size, "p50_us");
            double n = value(rs, "rr", FC_NIC, size, "p50_us");
            double spread = Math.max(c, Math.max(p, n)) / Math.min(c, Math.min(p, n));
            if (!Double.isNaN(spread) && (Double.isNaN(worst) || spread > worst)) {
                worst = spread;
                worstSize = size;
            }
        }
        out.add(judge("rr p50 of the three schemes within 10 % of each other at every size" + which, worst, 1, worst <= 1.10,
            String.format(Locale.ROOT, "widest spread %s× at %d B (slowest ÷ fastest)", num(worst), worstSize)));
        double c1k = value(rs, "stream", credit, 1024, "gbps");
        for (String s : new String[] {FC_PACKETIZED, FC_NIC}) {
            double v = value(rs, "stream", s, 1024, "gbps");
            out.add(judge("stream at 1 KiB: " + s + " ≥ 1.2× " + credit, v / c1k, 1, v / c1k >= 1.2,
                String.format(Locale.ROOT, "%s / %s Gbit/s = %s×", num(v), num(c1k), num(v / c1k))));
        }
        String best = null;
        boolean nicNeverWorse = true;
        String nicEvidence = "";
        double worstNic = Double.NaN;
        for (long compute : sizes(rs, "progress")) {
            double c = value(rs, "progress", credit, compute, "p50_us");
            double p = value(rs, "progress", FC_PACKETIZED, compute, "p50_us");
            double n = value(rs, "progress", FC_NIC, compute, "p50_us");
            if (Double.isNaN(c) || Double.isNaN(p) || Double.isNaN(n)) {
                continue;
            }
            if (best == null && c <= 0.85 * p && n <= 0.85 * p) {
                best = String.format(Locale.ROOT, "at %d µs: credit %s, nic %s, packetized %s µs (%s, %s of packetized)",
                    compute, num(c), num(n), num(p), pct(c / p), pct(n / p));
            }
            if (Double.isNaN(worstNic) || n / p > worstNic) {
                worstNic = n / p;
                nicEvidence = String.format(Locale.ROOT, "worst at %d µs: nic %s vs packetized %s µs (%s)", compute, num(n),
                    num(p), pct(n / p));
            }
            nicNeverWorse &= n <= 1.05 * p;
        }
        double anyProgress = value(rs, "progress", FC_PACKETIZED, sizes(rs, "progress").isEmpty() ? -1
            : sizes(rs, "progress").get(0), "p50_us");
        out.add(judge("progress (p50): at some computation time credit and nic both ≥ 15 % better than packetized" + which,
            anyProgress, 1, best != null, best != null ? best : "at no computation time"));
        out.add(judge("progress (p50): nic never more than 5 % worse than packetized" + which, anyProgress, 1, nicNeverWorse,
            nicEvidence));
        return out;
    }

    private static String pct(double ratio) {
        return String.format(Locale.ROOT, "%.0f %%", ratio * 100);
    }

    private static Target judge(String what, double a, double b, boolean ok, String evidence) {
        boolean measured = !Double.isNaN(a) && (Double.isNaN(b) ? !what.contains(" than ") && !what.contains(" tcp") : true);
        if (Double.isNaN(a) || (!measured)) {
            return new Target(what, null, "not in this run");
        }
        return new Target(what, ok, evidence);
    }

    /**
     * Writes {@code report.md}, {@code results.csv} and one PNG per scenario into {@code dir}.
     *
     * @return the markdown file
     */
    static Path write(Path dir, Options o, JsdpBench.Environment env) throws IOException {
        Files.createDirectories(dir);
        List<Result> rs = env.results;
        Result.writeCsv(dir.resolve("results.csv"), rs);
        StringBuilder md = new StringBuilder();
        md.append("# jsdp-bench report\n\n");
        md.append("| | |\n|---|---|\n");
        md.append("| date (UTC) | ").append(env.started).append(" → ").append(env.ended).append(" |\n");
        md.append("| JDK | ").append(env.jdk).append(" |\n");
        md.append("| machine | ").append(env.cpu).append(" |\n");
        md.append("| load average (1, 5, 15 min) | before ").append(env.loadBefore).append(", after ")
            .append(env.loadAfter).append(" |\n");
        md.append("| JVMs | ").append(o.oneJvm ? "one (client and server threads in one JVM)" : "two (client and server)")
            .append(", ").append(o.pin ? "pinned with taskset" : "unpinned").append(" |\n");
        md.append("| buffers | ").append(o.direct ? "direct" : "heap").append(" ByteBuffers; the stream reader's ")
            .append(o.streamReadBytes > 0 ? o.streamReadBytes + " bytes (--stream-read-bytes)" : "as large as a write").append(" |\n");
        md.append("| TCP_NODELAY | on for every connection").append(o.streamNagle ? ", except stream writers (Nagle's rule, --stream-nagle)" : "")
            .append(" (SDP: `noDelay`; not applicable to uds) |\n");
        md.append("| per point | warm-up ").append(o.warmupMs).append(" ms, measured ").append(o.durationMs)
            .append(" ms").append(o.quick ? " (--quick)" : "").append(" |\n");
        if (o.forks > 1) {
            md.append("| forks | ").append(o.forks).append(" launches of every series in fresh JVMs, the series taking turns;"
                + " every figure is the median of its ").append(o.forks).append(" values (their spread: the last section) |\n");
        }
        if (env.sdpTransport != null) {
            md.append("| SDP connections | `").append(env.sdpTransport).append("` (`SdpSocketOptions.TRANSPORT`) |\n");
        }
        md.append("| run | `").append(env.command).append("` |\n\n");
        String warning = loadWarning(env);
        if (warning != null) {
            md.append("**").append(warning).append("**\n\n");
        }
        md.append("Placement:\n\n");
        env.placements.forEach(p -> md.append("- ").append(p).append('\n'));
        md.append("\nHow each side waits:\n\n");
        env.waits.stream().distinct().forEach(w -> md.append("- ").append(w).append('\n')); // once per series, not per fork
        o.jvmArgs.stream().filter(a -> a.startsWith("-Djsdp.spinNs=")).reduce((first, last) -> last).ifPresent(a -> md
            .append("- every SDP series: the spin window is `").append(a).append("` (`--jvm-arg`, which wins over the above)\n"));
        md.append("\nSDP variants:\n\n");
        for (SdpVariant v : o.sdpVariants) {
            md.append("- `").append(v.name()).append("`: ").append(v.description())
                .append(v.jvmOptions().isEmpty() ? "" : " (`" + String.join(" ", v.jvmOptions()) + "`)").append('\n');
        }
        md.append("\n## Targets (issue 7)\n\n| target | verdict | figures |\n|---|---|---|\n");
        for (Target t : targets(rs)) {
            md.append("| ").append(t.what).append(" | **").append(t.verdict()).append("** | ").append(t.evidence).append(" |\n");
        }
        List<Target> fc = flowControlTargets(rs);
        if (!fc.isEmpty()) {
            md.append("\n## Flow control (issue 8, seed 001 ch. 4)\n\n| target | verdict | figures |\n|---|---|---|\n");
            for (Target t : fc) {
                md.append("| ").append(t.what).append(" | **").append(t.verdict()).append("** | ").append(t.evidence)
                    .append(" |\n");
            }
        }
        for (String sc : scenarios(rs)) {
            md.append("\n## ").append(sc).append("\n\n");
            md.append(describe(sc, o)).append("\n\n");
            List<String> metrics = metrics(rs, sc);
            md.append("| series | ").append(sc.equals("progress") ? "compute" : "size");
            metrics.forEach(m -> md.append(" | ").append(m));
            md.append(" | × vs tcp (").append(mainMetric(sc)).append(") |\n|---|---");
            metrics.forEach(m -> md.append("|---"));
            md.append("|---|\n");
            for (long size : sizes(rs, sc)) {
                for (String series : series(rs, sc)) {
                    Map<String, Double> row = new LinkedHashMap<>();
                    Result main = null;
                    for (Result r : rs) {
                        if (r.scenario().equals(sc) && r.series().equals(series) && r.size() == size) {
                            row.put(r.metric(), r.value());
                            if (r.metric().equals(mainMetric(sc))) {
                                main = r;
                            }
                        }
                    }
                    if (row.isEmpty()) {
                        continue;
                    }
                    md.append("| ").append(series).append(" | ").append(sizeLabel(sc, size));
                    for (String m : metrics) {
                        md.append(" | ").append(num(row.getOrDefault(m, Double.NaN)));
                    }
                    md.append(" | ").append(main == null ? "—" : num(vsTcp(rs, main)) + "×").append(" |\n");
                }
            }
            if (sc.equals("progress")) {
                md.append(overlapTable(rs));
            }
            String png = Plot.write(dir, sc, rs);
            if (png != null) {
                md.append("\n![").append(sc).append("](").append(png).append(")\n");
            }
        }
        if (env.forks.size() > 1) {
            md.append(forkSpread(env.forks));
        }
        md.append("\nUnits: latencies in µs (`p50_us` …), `gbps` in Gbit/s (10⁹ bit/s) of data delivered to the "
            + "receiver, rates per second. \"× vs tcp\": how many times better than `tcp` at the same size "
            + "(latency: tcp ÷ this; throughput and rates: this ÷ tcp). All rows: `results.csv`.\n");
        Path file = dir.resolve("report.md");
        Files.writeString(file, md.toString(), StandardCharsets.UTF_8);
        return file;
    }

    /**
     * The spread of each scenario's main figure across forks: per series and size the lowest, the median
     * (the figure the tables give) and the highest value.
     */
    static String forkSpread(List<List<Result>> forks) {
        StringBuilder md = new StringBuilder("\n## Spread across forks\n\nEach scenario's main figure in each of the "
            + forks.size() + " launches: lowest / median / highest.\n");
        List<Result> all = new ArrayList<>();
        forks.forEach(all::addAll);
        for (String sc : scenarios(all)) {
            String metric = mainMetric(sc);
            md.append("\n| ").append(sc).append(" (").append(metric).append(") | ")
                .append(sc.equals("progress") ? "compute" : "size").append(" | lowest | median | highest |\n|---|---|---|---|---|\n");
            for (String series : series(all, sc)) {
                for (long size : sizes(all, sc)) {
                    List<Result> same = new ArrayList<>();
                    for (Result r : all) {
                        if (r.scenario().equals(sc) && r.series().equals(series) && r.size() == size && r.metric().equals(metric)) {
                            same.add(r);
                        }
                    }
                    if (same.isEmpty()) {
                        continue;
                    }
                    double lo = same.stream().mapToDouble(Result::value).min().orElse(Double.NaN);
                    double hi = same.stream().mapToDouble(Result::value).max().orElse(Double.NaN);
                    md.append("| ").append(series).append(" | ").append(sizeLabel(sc, size)).append(" | ").append(num(lo))
                        .append(" | ").append(num(Result.median(same))).append(" | ").append(num(hi)).append(" |\n");
                }
            }
        }
        return md.toString();
    }

    /**
     * How much of the computation the communication overlapped, per series and computation time C:
     * {@code (2C + L0 - L) / C} with L the iteration's p50 at C and L0 at C = 0 — 1 when an iteration
     * takes one computation plus the communication (full progress), 0 when it takes two (none).
     */
    static double overlap(List<Result> rs, String series, long computeUs) {
        double l0 = value(rs, "progress", series, 0, "p50_us");
        double l = value(rs, "progress", series, computeUs, "p50_us");
        if (computeUs == 0 || Double.isNaN(l0) || Double.isNaN(l)) {
            return Double.NaN;
        }
        return (2.0 * computeUs + l0 - l) / computeUs;
    }

    private static String overlapTable(List<Result> rs) {
        List<Long> computes = new ArrayList<>(sizes(rs, "progress"));
        computes.remove(Long.valueOf(0));
        if (computes.isEmpty() || Double.isNaN(value(rs, "progress", series(rs, "progress").get(0), 0, "p50_us"))) {
            return "";
        }
        StringBuilder md = new StringBuilder("\nOverlap of computation and communication, `(2C + L0 − L) / C` from the "
            + "p50s (1: full progress, the computations of both sides run in parallel; 0: none, they run one after "
            + "the other):\n\n| series");
        computes.forEach(c -> md.append(" | C = ").append(c).append(" µs"));
        md.append(" |\n|---");
        computes.forEach(c -> md.append("|---"));
        md.append("|\n");
        for (String series : series(rs, "progress")) {
            md.append("| ").append(series);
            computes.forEach(c -> md.append(" | ").append(num(overlap(rs, series, c))));
            md.append(" |\n");
        }
        return md.toString();
    }

    /**
     * A warning when the machine was busy with other work: a 1-minute load average, before or after,
     * above the CPU count plus one half means something else wanted the CPUs the two sides need (the
     * run's own two spinning sides bring it to about 2).
     */
    static String loadWarning(JsdpBench.Environment env) {
        int cpus = Runtime.getRuntime().availableProcessors();
        double worst = Math.max(firstLoad(env.loadBefore), firstLoad(env.loadAfter));
        if (worst < cpus + 0.5) {
            return null;
        }
        return String.format(Locale.ROOT, "Busy machine: load average up to %.1f on %d CPUs. Other processes competed "
            + "for the CPUs; the figures are preliminary and ratios between transports may not hold on a quiet machine.",
            worst, cpus);
    }

    private static double firstLoad(String load) {
        try {
            return Double.parseDouble(load.trim().split("\\s+")[0]);
        } catch (RuntimeException e) {
            return 0;
        }
    }

    private static List<String> metrics(List<Result> rs, String scenario) {
        Set<String> s = new LinkedHashSet<>();
        rs.stream().filter(r -> r.scenario().equals(scenario) && !r.metric().equals("samples"))
            .forEach(r -> s.add(r.metric()));
        return new ArrayList<>(s);
    }

    private static String describe(String scenario, Options o) {
        switch (scenario) {
            case "rr":
                return "Round trip: the client writes N bytes, the server reads them and writes them back; one sample per "
                    + "round trip, one connection per point.";
            case "stream":
                return "One-way throughput: N-byte writes; counted as delivered by the server, from the end of the "
                    + "warm-up to the server's byte count after EOF.";
            case "rate":
                return "Small messages per second: " + o.window + " N-byte requests in flight, each echoed; responses per second.";
            case "connect":
                return "Connections per second: open, connect, a 16-byte header and a 1-byte answer, close; one after "
                    + "another. `p50_us` etc. are per connection.";
            case "progress":
                return "Communication progress (seed 001 §4.4): the client sends a burst of " + Client.BURST + " × "
                    + Client.BURST_MESSAGE_BYTES + " B, computes, then receives the server's burst; the server receives, "
                    + "computes as long, sends. Latency per iteration against the computation time (the CSV's "
                    + "`size_bytes` column holds the computation in µs). With full progress an iteration takes about one "
                    + "computation plus the communication; with none, two.";
            default:
                return "";
        }
    }
}
