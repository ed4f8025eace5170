package io.jsdp.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ReportTest {
    @TempDir
    Path dir;

    private static Result r(String sc, String t, String v, long size, String metric, double value, String unit) {
        return new Result(sc, t, v, size, metric, value, unit);
    }

    /** A run where SDP meets the latency targets and misses the others. */
    private static List<Result> run() {
        List<Result> rs = new ArrayList<>();
        rs.add(r("rr", "tcp", "-", 64, "p50_us", 60, "us"));
        rs.add(r("rr", "tcp-poll", "-", 64, "p50_us", 9, "us"));
        rs.add(r("rr", "uds", "-", 64, "p50_us", 50, "us"));
        rs.add(r("rr", "sdp", "credit", 64, "p50_us", 1.5, "us"));
        rs.add(r("rr", "sdp", "spin0", 64, "p50_us", 70, "us"));
        rs.add(r("stream", "tcp", "-", 65536, "gbps", 20, "Gbit/s"));
        rs.add(r("stream", "sdp", "credit", 65536, "gbps", 30, "Gbit/s"));
        rs.add(r("stream", "tcp", "-", 64, "gbps", 0.4, "Gbit/s"));
        rs.add(r("stream", "sdp", "credit", 64, "gbps", 4.4, "Gbit/s"));
        rs.add(r("connect", "tcp", "-", 16, "conns_per_s", 10000, "1/s"));
        rs.add(r("connect", "sdp", "credit", 16, "conns_per_s", 100, "1/s"));
        return rs;
    }

    @Test
    void csvRowsRoundTripAndKeepTheContractHeader() throws IOException {
        Path f = dir.resolve("sub/out.csv");
        List<Result> rs = run();
        Result.writeCsv(f, rs);
        List<String> lines = Files.readAllLines(f);
        assertEquals("scenario,transport,variant,size_bytes,metric,value,unit", lines.get(0));
        assertEquals("rr,sdp,credit,64,p50_us,1.5,us", lines.get(4));
        assertEquals(rs, Result.readCsv(f));
        assertEquals("0.3333", Result.format(1 / 3.0));
        assertEquals("12", Result.format(12.0));
        assertThrows(IllegalArgumentException.class, () -> r("rr", "tcp,x", "-", 1, "p50_us", 1, "us"));
        assertThrows(IllegalArgumentException.class, () -> Result.parse("rr,tcp,-,64,p50_us,1"));
    }

    @Test
    void ratiosToTcpSayHowManyTimesBetter() {
        List<Result> rs = run();
        assertEquals(40.0, Report.vsTcp(rs, rs.get(3)), 1e-9, "latency: tcp / this");
        assertEquals(1.5, Report.vsTcp(rs, rs.get(6)), 1e-9, "throughput: this / tcp");
        assertEquals(Double.NaN, Report.vsTcp(rs, r("rate", "sdp", "credit", 64, "msgs_per_s", 5, "1/s")));
    }

    @Test
    void targetsAreJudgedOnTheRunsFigures() {
        Map<String, String> verdicts = Report.targets(run()).stream()
            .collect(Collectors.toMap(t -> t.what, Report.Target::verdict));
        assertEquals("MET", verdicts.get("64 B rr p50 ≤ 2 µs, SDP spinning (sdp/credit)"));
        assertEquals("MET", verdicts.get("64 B rr p50 ≥ 5× better than tcp-poll"));
        assertEquals("MET", verdicts.get("64 B rr p50 ≥ 30× better than tcp"));
        assertEquals("MISSED", verdicts.get("64 KiB stream ≥ 2× tcp"));
        assertEquals("MET", verdicts.get("64 B stream ≥ 10× tcp"));
        assertEquals("MISSED", verdicts.get("blocking rr (sdp/spin0, 64 B p50) no worse than uds"));
        assertEquals("MISSED", verdicts.get("connect ≥ ½ tcp's rate"));
    }

    @Test
    void targetsWithoutFiguresAreNotMeasuredRatherThanMetOrMissed() {
        List<Result> onlySdp = List.of(r("rr", "sdp", "credit", 64, "p50_us", 1.5, "us"));
        List<Report.Target> ts = Report.targets(onlySdp);
        assertEquals("MET", ts.get(0).verdict());
        for (Report.Target t : ts.subList(1, ts.size())) {
            assertNull(t.met, t.what);
        }
    }

    @Test
    void reportHasTheFactsTheRatioColumnTheTargetsAndAPlotPerScenario() throws Exception {
        Options o = Options.parse("rr,stream,connect", "--quick");
        JsdpBench.Environment env = new JsdpBench.Environment();
        env.results.addAll(run());
        env.started = "2026-01-01T00:00:00Z";
        env.ended = "2026-01-01T00:01:00Z";
        env.loadBefore = "0.10 0.20 0.30";
        env.loadAfter = "1.00 0.50 0.40";
        env.jdk = "Test JDK 17";
        env.cpu = "2 CPUs, test";
        env.command = "rr,stream,connect quick";
        env.placements.add("sdp/credit: client pid 1 on CPUs 0, server pid 2 on CPUs 1 (taskset)");
        env.waits.add("sdp/credit: spin 20 µs, then park");
        Path md = Report.write(dir, o, env);
        String text = Files.readString(md);
        for (String expected : new String[] {"2026-01-01T00:00:00Z", "Test JDK 17", "before 0.10 0.20 0.30",
            "client pid 1 on CPUs 0, server pid 2 on CPUs 1 (taskset)", "spin 20 µs, then park",
            "| sdp/credit | 64 B | 1.50 | 40.0× |", "| 64 KiB stream ≥ 2× tcp | **MISSED** |", "![rr](rr.png)"}) {
            assertTrue(text.contains(expected), () -> "report lacks '" + expected + "':\n" + text);
        }
        for (String sc : new String[] {"rr", "stream", "connect"}) {
            BufferedImage img = ImageIO.read(dir.resolve(sc + ".png").toFile());
            assertEquals(820, img.getWidth(), sc);
        }
        assertEquals(run(), Result.readCsv(dir.resolve("results.csv")));
    }

    @Test
    void aSpinWindowGivenByJvmArgIsStatedBesideTheVariantsDefault() throws Exception {
        Options o = Options.parse("rr", "--quick", "--jvm-arg", "-Djsdp.spinNs=100000");
        JsdpBench.Environment env = new JsdpBench.Environment();
        env.results.addAll(run());
        env.command = "rr quick";
        env.waits.add("sdp/credit: spin 20 µs, then park");
        String text = Files.readString(Report.write(dir, o, env));
        assertTrue(text.contains("the spin window is `-Djsdp.spinNs=100000`"), text);
        String without = Files.readString(Report.write(dir, Options.parse("rr", "--quick"), env));
        assertFalse(without.contains("the spin window is"), without);
    }

    @Test
    void progressOverlapIsOneForFullProgressAndZeroForNone() {
        List<Result> rs = List.of(r("progress", "sdp", "credit", 0, "p50_us", 40, "us"),
            r("progress", "sdp", "credit", 100, "p50_us", 140, "us"),
            r("progress", "tcp", "-", 0, "p50_us", 40, "us"),
            r("progress", "tcp", "-", 100, "p50_us", 240, "us"));
        assertEquals(1.0, Report.overlap(rs, "sdp/credit", 100), 1e-9);
        assertEquals(0.0, Report.overlap(rs, "tcp", 100), 1e-9);
        assertEquals(Double.NaN, Report.overlap(rs, "tcp", 0));
    }

    @Test
    void aBusyMachineIsSaidSoAndAQuietOneIsNot() {
        JsdpBench.Environment env = new JsdpBench.Environment();
        env.loadBefore = "0.20 0.10 0.05";
        env.loadAfter = "0.90 0.30 0.10";
        assertNull(Report.loadWarning(env));
        env.loadAfter = "40.00 12.00 3.00";
        assertTrue(Report.loadWarning(env).startsWith("Busy machine: load average up to 40.0 on "));
    }

    @Test
    void summaryListsTheMainFigurePerSeriesAndSize() {
        String s = Report.summary(run());
        assertTrue(s.contains("sdp/credit"), s);
        assertTrue(s.contains("64 KiB"), s);
        assertTrue(s.contains("MISSED  connect ≥ ½ tcp's rate"), s);
    }

    /** Issue 8: the three flow-control variants judged against the thesis' ordering. */
    @Test
    void flowControlOrderingIsJudgedOnlyWhenAllThreeSchemesRan() {
        assertTrue(Report.flowControlTargets(run()).isEmpty(), "credit alone: nothing to compare");
        List<Result> rs = new ArrayList<>();
        for (String v : new String[] {"credit", "packetized", "nic"}) {
            rs.add(r("rr", "sdp", v, 64, "p50_us", v.equals("nic") ? 10.5 : 10, "us"));
        }
        rs.add(r("stream", "sdp", "credit", 1024, "gbps", 1, "Gbit/s"));
        rs.add(r("stream", "sdp", "packetized", 1024, "gbps", 1.3, "Gbit/s"));
        rs.add(r("stream", "sdp", "nic", 1024, "gbps", 1.1, "Gbit/s"));
        // compute 0: all alike; compute 100: packetized 40 % slower, nic 3 % worse than packetized at 200
        rs.add(r("progress", "sdp", "credit", 0, "p50_us", 100, "us"));
        rs.add(r("progress", "sdp", "packetized", 0, "p50_us", 100, "us"));
        rs.add(r("progress", "sdp", "nic", 0, "p50_us", 100, "us"));
        rs.add(r("progress", "sdp", "credit", 100, "p50_us", 200, "us"));
        rs.add(r("progress", "sdp", "packetized", 100, "p50_us", 340, "us"));
        rs.add(r("progress", "sdp", "nic", 100, "p50_us", 210, "us"));
        rs.add(r("progress", "sdp", "credit", 200, "p50_us", 500, "us"));
        rs.add(r("progress", "sdp", "packetized", 200, "p50_us", 500, "us"));
        rs.add(r("progress", "sdp", "nic", 200, "p50_us", 515, "us"));
        List<Report.Target> t = Report.flowControlTargets(rs);
        assertEquals(5, t.size());
        assertEquals("MET", t.get(0).verdict(), t.get(0).evidence);
        assertEquals("MET", t.get(1).verdict(), "packetized 1.3x");
        assertEquals("MISSED", t.get(2).verdict(), "nic 1.1x");
        assertEquals("MET", t.get(3).verdict(), t.get(3).evidence);
        assertTrue(t.get(3).evidence.startsWith("at 100 µs"), t.get(3).evidence);
        assertEquals("MET", t.get(4).verdict(), t.get(4).evidence);
        rs.add(r("progress", "sdp", "credit", 300, "p50_us", 500, "us"));
        rs.add(r("progress", "sdp", "packetized", 300, "p50_us", 500, "us"));
        rs.add(r("progress", "sdp", "nic", 300, "p50_us", 530, "us"));
        assertEquals("MISSED", Report.flowControlTargets(rs).get(4).verdict(), "nic 6 % worse at 300 µs");
        assertTrue(Report.summary(rs).contains("flow control (issue 8"), Report.summary(rs));
    }

    /** --forks: each figure the median of the launches that have it; the spread names lowest and highest. */
    @Test
    void forksGiveMediansAndTheirSpread() {
        List<List<Result>> forks = List.of(
            List.of(r("stream", "sdp", "credit", 1024, "gbps", 3, "Gbit/s"), r("rr", "sdp", "credit", 64, "p50_us", 1, "us")),
            List.of(r("stream", "sdp", "credit", 1024, "gbps", 9, "Gbit/s"), r("rr", "sdp", "credit", 64, "p50_us", 2, "us")),
            List.of(r("stream", "sdp", "credit", 1024, "gbps", 4, "Gbit/s")));
        List<Result> m = Result.medians(forks);
        assertEquals(2, m.size());
        assertEquals(4, m.get(0).value(), 1e-9, "median of 3, 9, 4");
        assertEquals(1.5, m.get(1).value(), 1e-9, "rr is in two forks only: the mean of the middle two");
        String md = Report.forkSpread(forks);
        assertTrue(md.contains("| sdp/credit | 1 KiB | 3.00 | 4.00 | 9.00 |"), md);
        assertTrue(md.contains("| sdp/credit | 64 B | 1.00 | 1.50 | 2.00 |"), md);
    }

    /** Issue 8 with the thesis' credit-based scheme in the run: the checks again, with it as the baseline. */
    @Test
    void theThesisCreditSchemeIsJudgedAsASecondBaseline() {
        List<Result> rs = new ArrayList<>();
        for (String v : new String[] {"credit", "credit-thesis", "packetized", "nic"}) {
            rs.add(r("rr", "sdp", v, 64, "p50_us", v.equals("credit-thesis") ? 12 : 10, "us"));
            rs.add(r("progress", "sdp", v, 100, "p50_us", v.equals("packetized") ? 340 : 200, "us"));
        }
        rs.add(r("stream", "sdp", "credit", 1024, "gbps", 2, "Gbit/s"));
        rs.add(r("stream", "sdp", "credit-thesis", 1024, "gbps", 1, "Gbit/s"));
        rs.add(r("stream", "sdp", "packetized", 1024, "gbps", 1.1, "Gbit/s"));
        rs.add(r("stream", "sdp", "nic", 1024, "gbps", 1.3, "Gbit/s"));
        List<Report.Target> t = Report.flowControlTargets(rs);
        assertEquals(10, t.size());
        assertEquals("MISSED", t.get(2).verdict(), "nic 0.65x the coalescing credit");
        for (int i = 5; i < 10; i++) {
            assertTrue(t.get(i).what.contains("sdp/credit-thesis"), t.get(i).what);
        }
        assertEquals("MISSED", t.get(5).verdict(), "rr spread 1.2x with the thesis' credit");
        assertEquals("MISSED", t.get(6).verdict(), "packetized 1.1x the thesis' credit");
        assertEquals("MET", t.get(7).verdict(), "nic 1.3x the thesis' credit");
        assertEquals("MET", t.get(8).verdict(), t.get(8).evidence);
    }
}
