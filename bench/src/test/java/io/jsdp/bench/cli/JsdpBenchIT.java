package io.jsdp.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar works end to end: every scenario over every transport and both default SDP variants, two
 * JVMs per run as by default, with points a few milliseconds long (no figure is checked: speed is for
 * the benchmark itself, not for tests), and once in one JVM.
 */
class JsdpBenchIT {
    private static final Path JAR = Path.of("target", "jsdp-bench.jar");

    @TempDir
    Path dir;

    private String run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        Path log = dir.resolve("out-" + System.nanoTime() + ".txt");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(150, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("jsdp-bench did not finish within 150 s:\n" + Files.readString(log));
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void everyScenarioRunsOverEveryTransportAndWritesTheCsvAndReport() throws Exception {
        Path csv = dir.resolve("r.csv");
        Path report = dir.resolve("report");
        String out = run("all", "--quick", "--sdp-variants", "credit,spin0", "--sizes", "64", "--computes", "0,20", "--warmup-ms", "10",
            "--duration-ms", "40", "--jvm-warmup-ms", "50", "--csv", csv.toString(), "--report", report.toString());
        List<Result> rs = Result.readCsv(csv);
        Set<String> seen = new TreeSet<>();
        for (Result r : rs) {
            seen.add(r.scenario() + " " + r.series());
            assertTrue(r.value() >= 0 && !Double.isNaN(r.value()), r.toString());
        }
        Set<String> expected = new TreeSet<>();
        for (Scenario s : Scenario.values()) {
            for (String series : new String[] {"tcp", "tcp-poll", "uds", "sdp/credit", "sdp/spin0"}) {
                expected.add(s.id() + " " + series);
            }
        }
        assertEquals(expected, seen, out);
        String md = Files.readString(report.resolve("report.md"));
        assertTrue(md.contains("| SDP connections | `sdp "), md);
        assertTrue(md.contains("## Targets (issue 7)"), md);
        for (Scenario s : Scenario.values()) {
            assertTrue(Files.size(report.resolve(s.id() + ".png")) > 1000, s.id());
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void quickStreamRunsTheBufferCopyZeroCopyAndFlowControlVariantsAtOneMebibyte() throws Exception {
        Path csv = dir.resolve("z.csv");
        run("stream", "--quick", "--one-jvm", "--transports", "sdp", "--sizes", "1048576", "--warmup-ms", "10",
            "--duration-ms", "100", "--jvm-warmup-ms", "50", "--csv", csv.toString());
        Set<String> seen = new TreeSet<>();
        for (Result r : Result.readCsv(csv)) {
            if (r.csv().startsWith("stream,sdp,") && r.csv().contains(",1048576,gbps,")) {
                seen.add(r.series());
                assertTrue(r.value() > 0, r.toString());
            }
        }
        assertEquals(new TreeSet<>(List.of("sdp/credit", "sdp/spin0", "sdp/bcopy", "sdp/zcopy", "sdp/packetized", "sdp/nic",
            "sdp/credit-thesis")), seen, "a quick stream compares the flow-control schemes too (issue 8)");
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void oneJvmModeStreamsOverSdpWithHeapBuffers() throws Exception {
        Path csv = dir.resolve("one.csv");
        run("stream", "--one-jvm", "--transports", "sdp", "--sdp-variants", "credit", "--sizes", "1048576",
            "--buffer", "heap", "--warmup-ms", "10", "--duration-ms", "50", "--jvm-warmup-ms", "50", "--csv", csv.toString());
        List<Result> rs = Result.readCsv(csv);
        assertEquals(3, rs.size(), rs.toString()); // gbps, msgs_per_s, cpu_per_op_us
        assertEquals("stream,sdp,credit,1048576,gbps", rs.get(0).csv().substring(0, rs.get(0).csv().lastIndexOf(',',
            rs.get(0).csv().lastIndexOf(',') - 1)));
        assertTrue(rs.get(0).value() > 0, rs.toString());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void forksRunEverySeriesAgainAndReportTheMedians() throws Exception {
        Path csv = dir.resolve("forks.csv");
        Path report = dir.resolve("forks-report");
        String out = run("stream", "--one-jvm", "--transports", "sdp", "--sdp-variants", "credit,credit-thesis", "--sizes",
            "1024", "--forks", "3", "--warmup-ms", "10", "--duration-ms", "40", "--jvm-warmup-ms", "0", "--csv", csv.toString(),
            "--report", report.toString());
        assertTrue(out.contains("# fork 1 of 3") && out.contains("# fork 3 of 3"), out);
        // every fork printed its own figure; the CSV keeps one, the median
        assertEquals(3, out.lines().filter(l -> l.startsWith("stream    sdp/credit-thesis") && l.contains("gbps")).count(), out);
        List<Result> rs = Result.readCsv(csv);
        assertEquals(1, rs.stream().filter(r -> r.variant().equals("credit-thesis") && r.metric().equals("gbps")).count(),
            rs.toString());
        String md = Files.readString(report.resolve("report.md"));
        assertTrue(md.contains("| forks | 3 launches of every series"), md);
        assertTrue(md.contains("## Spread across forks"), md);
        assertTrue(md.contains("| sdp/credit-thesis | 1 KiB |"), md);
        assertEquals(1, md.lines().filter(l -> l.startsWith("- sdp/credit-thesis: spin")).count(), "how it waits, once: " + md);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void abRoundsAlternateTheArmsAndReportTheMedianRatio() throws Exception {
        Path csv = dir.resolve("ab.csv");
        String out = run("rr", "--one-jvm", "--transports", "sdp", "--sdp-variants", "credit-notrace,credit", "--sizes", "64",
            "--rounds", "2", "--warmup-ms", "10", "--duration-ms", "40", "--jvm-warmup-ms", "0", "--csv", csv.toString());
        assertTrue(out.contains("# A = sdp/credit-notrace, B = sdp/credit"), out);
        assertTrue(out.contains("# round 1/2 (A first) rr 64 B: A iqmean "), out);
        assertTrue(out.contains("# round 2/2 (B first) rr 64 B: A iqmean "), out);
        assertTrue(out.contains("rr 64 B iqmean B/A median "), out);
        Set<String> metrics = new TreeSet<>();
        for (Result r : Result.readCsv(csv)) {
            metrics.add(r.variant() + " " + r.metric());
            assertTrue(r.value() > 0, r.toString());
        }
        assertTrue(metrics.containsAll(List.of("credit-notrace r01_iqmean_us", "credit r01_mean_us", "credit-notrace r02_p50_us",
            "credit ab_iqmean_ratio_median", "credit ab_iqmean_ratio_ci95_lo", "credit ab_iqmean_ratio_ci95_hi",
            "credit ab_mean_ratio_median", "credit ab_p50_ratio_max")), metrics.toString());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void streamAbRoundsCompareThroughputs() throws Exception {
        Path csv = dir.resolve("ab-stream.csv");
        String out = run("stream", "--one-jvm", "--transports", "sdp", "--sdp-variants", "bcopy,zcopy", "--sizes", "1048576",
            "--rounds", "2", "--warmup-ms", "10", "--duration-ms", "40", "--jvm-warmup-ms", "0", "--csv", csv.toString());
        assertTrue(out.contains("# A = sdp/bcopy, B = sdp/zcopy"), out);
        assertTrue(out.contains("# round 1/2 (A first) stream 1048576 B: A "), out);
        assertTrue(out.contains("# round 2/2 (B first) stream 1048576 B: A "), out);
        assertTrue(out.contains("stream 1048576 B gbps   B/A median "), out);
        Set<String> metrics = new TreeSet<>();
        for (Result r : Result.readCsv(csv)) {
            metrics.add(r.variant() + " " + r.metric());
            assertTrue(r.value() > 0, r.toString());
        }
        assertTrue(metrics.containsAll(List.of("bcopy r01_gbps", "zcopy r02_gbps", "zcopy ab_gbps_ratio_median",
            "zcopy ab_gbps_ratio_ci95_lo")), metrics.toString());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void badArgumentsExitWithUsage() throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
            JAR.toString(), "rr", "--transports", "carrier-pigeon");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(20, TimeUnit.SECONDS));
        assertEquals(2, p.exitValue(), out);
        assertTrue(out.contains("unknown transport 'carrier-pigeon'") && out.contains("usage:"), out);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void selectorEventLoopsUnderLoadRunEveryScenarioAndReportCpuPerOperation() throws Exception {
        Path csv = dir.resolve("sel.csv");
        String out = run("rr,stream,rate,connect", "--io", "selector", "--connections", "4", "--load", "1", "--transports",
            "tcp,uds,sdp", "--sdp-variants", "credit", "--sizes", "64", "--warmup-ms", "20", "--duration-ms", "200",
            "--jvm-warmup-ms", "50", "--csv", csv.toString());
        Set<String> seen = new TreeSet<>();
        for (Result r : Result.readCsv(csv)) {
            assertTrue(r.value() >= 0, r.toString());
            if (r.metric().equals("cpu_per_op_us") && !Double.isNaN(r.value())) {
                seen.add(r.scenario() + " " + r.series());
            }
        }
        Set<String> expected = new TreeSet<>();
        for (String sc : new String[] {"rr", "stream", "rate", "connect"}) {
            for (String series : new String[] {"tcp", "uds", "sdp/credit"}) {
                expected.add(sc + " " + series);
            }
        }
        assertEquals(expected, seen, out);
        assertTrue(out.contains("io=selector connections=4 load=1"), out);
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void nettyEventLoopsRunEveryScenarioOverTcpAndSdp() throws Exception {
        Path csv = dir.resolve("netty.csv");
        String out = run("rr,stream,rate,connect", "--io", "netty", "--connections", "4", "--transports", "tcp,sdp",
            "--sdp-variants", "credit", "--sizes", "64", "--warmup-ms", "20", "--duration-ms", "200", "--jvm-warmup-ms", "50",
            "--csv", csv.toString());
        Set<String> seen = new TreeSet<>();
        for (Result r : Result.readCsv(csv)) {
            assertTrue(r.value() >= 0, r.toString());
            if ((r.metric().equals("msgs_per_s") || r.metric().equals("conns_per_s")) && r.value() > 0) {
                seen.add(r.scenario() + " " + r.series());
            }
        }
        Set<String> expected = new TreeSet<>();
        for (String sc : new String[] {"rr", "stream", "rate", "connect"}) {
            for (String series : new String[] {"tcp", "sdp/credit"}) {
                expected.add(sc + " " + series);
            }
        }
        assertEquals(expected, seen, out);
        assertTrue(out.contains("io=netty connections=4"), out);
    }
}
