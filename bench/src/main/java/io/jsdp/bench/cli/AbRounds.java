package io.jsdp.bench.cli;

import java.io.IOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * {@code --rounds N}: an A/B comparison of {@code rr} latency that can decide a difference of about 1 %
 * (issue 10's tracing target), or of {@code stream} throughput, whose 1 s points move by a factor of
 * two or more from one JVM launch to the next on this VM (issues 8 and 9). One run of each arm cannot:
 * the p50 moves in 10 ns steps (1.5 % of 0.65 µs) and this VM switches between two core-to-core speeds
 * (0.65 and 1.2 µs round trips) from one JVM start to the next. So A and B run in alternating
 * rounds — round 1 A then B, round 2 B then A, ... — each arm in fresh JVMs, and each round gives the
 * ratio B/A of the two arms' round-trip times: of their
 * interquartile means (no 10 ns steps, and not moved by descheduled round trips), their means and their
 * p50s. A round where the VM changed speed between A and B gives an outlying ratio; the median of the
 * rounds' ratios does not follow it. The spread: min and max, and a percentile bootstrap
 * 95 % interval of the median (10,000 resamples of the rounds, fixed seed, so a rerun of the same figures
 * gives the same interval).
 */
final class AbRounds {
    /** Bootstrap resamples of the per-round ratios. */
    static final int RESAMPLES = 10_000;
    private static final long SEED = 20261124L;

    private AbRounds() {
    }

    /** One arm: a series and the JVM options it adds. */
    record Arm(String label, Transport transport, SdpVariant variant, String csvVariant, List<String> extraJvmArgs) {
    }

    /** The two arms of {@code o}: its two series, or its one series without and with {@code --ab-jvm-arg}. */
    static Arm[] arms(Options o) {
        List<Arm> series = new ArrayList<>();
        for (Transport t : o.transports) {
            if (t == Transport.SDP) {
                for (SdpVariant v : o.sdpVariants) {
                    series.add(new Arm(t.id() + "/" + v.name(), t, v, v.name(), List.of()));
                }
            } else {
                series.add(new Arm(t.id(), t, null, Result.NO_VARIANT, List.of()));
            }
        }
        if (o.abJvmArgs.isEmpty()) {
            return new Arm[] {series.get(0), series.get(1)};
        }
        Arm a = series.get(0);
        String csv = a.variant == null ? "ab" : a.csvVariant + "+ab";
        return new Arm[] {a, new Arm(a.label + " " + String.join(" ", o.abJvmArgs), a.transport, a.variant, csv,
            o.abJvmArgs)};
    }

    /**
     * The figures compared, in order of weight: the interquartile mean (the decision: fine-grained and not
     * moved by descheduled round trips), the mean (what the issue names; on a shared machine its outliers
     * dominate it) and the p50 (10 ns steps).
     */
    static final List<String> METRICS = List.of("iqmean_us", "mean_us", "p50_us");

    /** {@code stream}'s figure: throughput (B/A above 1: B is faster). */
    static final List<String> STREAM_METRICS = List.of("gbps");

    /** The figures compared for the run's one scenario. */
    static List<String> metrics(Scenario s) {
        return s == Scenario.STREAM ? STREAM_METRICS : METRICS;
    }

    static void run(Options o) throws IOException, InterruptedException {
        Arm[] arms = arms(o);
        Scenario scenario = o.scenarios.iterator().next();
        List<String> metrics = metrics(scenario);
        String sc = scenario.id();
        int[] sizes = o.sizes.get(scenario);
        int m = metrics.size();
        System.out.println("# jsdp-bench A/B " + JsdpBench.command(o) + " rounds=" + o.rounds);
        System.out.println("# " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", load average "
            + JsdpBench.loadAverage() + ", " + JsdpBench.cpuModel());
        System.out.println("# A = " + arms[0].label + ", B = " + arms[1].label);
        double[][][][] v = new double[o.rounds][2][sizes.length][m]; // [round][arm][size][metric]
        List<Result> csv = new ArrayList<>();
        String jdk = null;
        for (int r = 0; r < o.rounds; r++) {
            int first = r % 2; // A first in odd rounds (1, 3, ...), B first in even ones
            for (int k = 0; k < 2; k++) {
                int arm = k == 0 ? first : 1 - first;
                Arm a = arms[arm];
                JsdpBench.Environment env = new JsdpBench.Environment();
                JsdpBench.runOne(o, env, a.transport, a.variant, a.extraJvmArgs);
                jdk = env.jdk != null ? env.jdk : jdk;
                for (String p : env.placements) {
                    System.out.println("# round " + (r + 1) + " " + (arm == 0 ? "A" : "B") + ": " + p);
                }
                for (int s = 0; s < sizes.length; s++) {
                    for (int i = 0; i < m; i++) {
                        v[r][arm][s][i] = value(env.results, sc, sizes[s], metrics.get(i));
                        csv.add(new Result(sc, a.transport.id(), a.csvVariant, sizes[s],
                            String.format(Locale.ROOT, "r%02d_", r + 1) + metrics.get(i), v[r][arm][s][i],
                            scenario == Scenario.STREAM ? "Gbit/s" : "us"));
                    }
                }
            }
            for (int s = 0; s < sizes.length; s++) {
                double[][] x = {v[r][0][s], v[r][1][s]};
                if (scenario == Scenario.STREAM) {
                    System.out.println(String.format(Locale.ROOT,
                        "# round %d/%d (%s first) stream %d B: A %.3f Gbit/s | B %.3f Gbit/s | B/A %.4f",
                        r + 1, o.rounds, first == 0 ? "A" : "B", sizes[s], x[0][0], x[1][0], x[1][0] / x[0][0]));
                    continue;
                }
                System.out.println(String.format(Locale.ROOT,
                    "# round %d/%d (%s first) rr %d B: A iqmean %.4f mean %.4f p50 %.3f us | B iqmean %.4f mean %.4f"
                        + " p50 %.3f us | B/A iqmean %.4f mean %.4f",
                    r + 1, o.rounds, first == 0 ? "A" : "B", sizes[s], x[0][0], x[0][1], x[0][2], x[1][0], x[1][1], x[1][2],
                    x[1][0] / x[0][0], x[1][1] / x[0][1]));
            }
        }
        System.out.println();
        System.out.println("# A/B result over " + o.rounds + " rounds: B/A per round, its median, min, max and a bootstrap"
            + " 95 % interval of the median; A = " + arms[0].label + ", B = " + arms[1].label
            + (jdk == null ? "" : "; JDK " + jdk));
        for (int s = 0; s < sizes.length; s++) {
            for (int i = 0; i < m; i++) {
                double[] ratios = new double[o.rounds];
                for (int r = 0; r < o.rounds; r++) {
                    ratios[r] = v[r][1][s][i] / v[r][0][s][i];
                }
                double med = median(ratios);
                double[] ci = bootstrapMedianInterval(ratios, RESAMPLES, SEED);
                double[] sorted = ratios.clone();
                Arrays.sort(sorted);
                String metric = scenario == Scenario.STREAM ? metrics.get(i)
                    : metrics.get(i).substring(0, metrics.get(i).length() - 3);
                System.out.println(String.format(Locale.ROOT,
                    sc + " %d B %-6s B/A median %.4f (%+.2f %%), min %.4f, max %.4f, 95 %% interval [%.4f, %.4f]",
                    sizes[s], metric, med, (med - 1) * 100, sorted[0], sorted[sorted.length - 1], ci[0], ci[1]));
                String t = arms[1].transport.id();
                String variant = arms[1].csvVariant;
                String prefix = "ab_" + metric + "_ratio_";
                csv.add(new Result(sc, t, variant, sizes[s], prefix + "median", med, "ratio"));
                csv.add(new Result(sc, t, variant, sizes[s], prefix + "min", sorted[0], "ratio"));
                csv.add(new Result(sc, t, variant, sizes[s], prefix + "max", sorted[sorted.length - 1], "ratio"));
                csv.add(new Result(sc, t, variant, sizes[s], prefix + "ci95_lo", ci[0], "ratio"));
                csv.add(new Result(sc, t, variant, sizes[s], prefix + "ci95_hi", ci[1], "ratio"));
            }
        }
        System.out.println("# done " + Instant.now().truncatedTo(ChronoUnit.SECONDS) + ", load average "
            + JsdpBench.loadAverage());
        if (o.csv != null) {
            Result.writeCsv(o.csv, csv);
            System.out.println("# CSV: " + o.csv);
        }
    }

    private static double value(List<Result> results, String scenario, int size, String metric) throws IOException {
        for (Result r : results) {
            if (r.scenario().equals(scenario) && r.size() == size && r.metric().equals(metric)) {
                return r.value();
            }
        }
        throw new IOException("the worker reported no " + scenario + " " + metric + " for " + size + " B");
    }

    /** The median; the mean of the middle two for an even count. */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    /**
     * A percentile bootstrap 95 % interval of the median: the 2.5th and 97.5th percentiles of the medians
     * of {@code resamples} resamples (with replacement) of {@code values}.
     */
    static double[] bootstrapMedianInterval(double[] values, int resamples, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        double[] medians = new double[resamples];
        double[] sample = new double[values.length];
        for (int b = 0; b < resamples; b++) {
            for (int i = 0; i < sample.length; i++) {
                sample[i] = values[random.nextInt(values.length)];
            }
            medians[b] = median(sample);
        }
        Arrays.sort(medians);
        return new double[] {medians[(int) Math.floor(0.025 * (resamples - 1))],
            medians[(int) Math.ceil(0.975 * (resamples - 1))]};
    }
}
