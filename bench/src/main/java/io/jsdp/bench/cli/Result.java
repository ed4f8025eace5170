package io.jsdp.bench.cli;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One measured figure: a row of the CSV {@code scenario,transport,variant,size_bytes,metric,value,unit}.
 * {@code variant} is the SDP variant's name, {@code -} for the JDK transports; {@code size_bytes} is the
 * message size, except for {@code progress}, where it is the computation time in µs (the message size
 * there is fixed: 1024 B).
 *
 * @param scenario {@link Scenario#id()}
 * @param transport {@link Transport#id()}
 * @param variant the SDP variant, or {@link #NO_VARIANT}
 * @param size bytes per message (progress: computation µs)
 * @param metric e.g. {@code p50_us}, {@code gbps}
 * @param value the figure
 * @param unit e.g. {@code us}, {@code Gbit/s}
 */
record Result(String scenario, String transport, String variant, long size, String metric, double value, String unit) {
    /** The CSV header line. */
    static final String HEADER = "scenario,transport,variant,size_bytes,metric,value,unit";
    /** {@code variant} of a transport without variants. */
    static final String NO_VARIANT = "-";

    Result {
        for (String s : new String[] {scenario, transport, variant, metric, unit}) {
            if (s.isEmpty() || s.indexOf(',') >= 0 || s.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("CSV field '" + s + "' is empty or holds a comma or newline");
            }
        }
    }

    /** {@code transport} or {@code transport/variant}: one line of a table or plot. */
    String series() {
        return variant.equals(NO_VARIANT) ? transport : transport + "/" + variant;
    }

    /** What identifies a figure across forks: everything but the value. */
    private String key() {
        return String.join(",", scenario, transport, variant, Long.toString(size), metric, unit);
    }

    /**
     * The median of each figure over several launches of the same run ({@code --forks}), in the order
     * the figures first appear; a figure some forks lack is the median of those that have it.
     *
     * @param forks each launch's figures
     * @return one figure per key
     */
    static List<Result> medians(List<List<Result>> forks) {
        Map<String, List<Result>> byKey = new LinkedHashMap<>();
        for (List<Result> fork : forks) {
            for (Result r : fork) {
                byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r);
            }
        }
        List<Result> out = new ArrayList<>();
        for (List<Result> same : byKey.values()) {
            Result r = same.get(0);
            out.add(new Result(r.scenario, r.transport, r.variant, r.size, r.metric, median(same), r.unit));
        }
        return out;
    }

    /**
     * The median of the figures' values (the mean of the middle two for an even count).
     *
     * @param rs at least one figure
     * @return the median
     */
    static double median(List<Result> rs) {
        return AbRounds.median(rs.stream().mapToDouble(Result::value).toArray());
    }

    /** The CSV row (no line end); the value with up to 4 decimals, no exponent. */
    String csv() {
        return String.join(",", scenario, transport, variant, Long.toString(size), metric, format(value), unit);
    }

    static String format(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        String s = String.format(Locale.ROOT, "%.4f", v);
        s = s.replaceAll("0+$", "");
        return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
    }

    /**
     * Parses a row {@link #csv} wrote.
     *
     * @throws IllegalArgumentException for anything else
     */
    static Result parse(String line) {
        String[] f = line.split(",", -1);
        if (f.length != 7) {
            throw new IllegalArgumentException("not a result row (7 fields): " + line);
        }
        try {
            return new Result(f[0], f[1], f[2], Long.parseLong(f[3]), f[4], Double.parseDouble(f[5]), f[6]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a result row: " + line, e);
        }
    }

    /** Writes the header and every row to {@code file}, creating its directory. */
    static void writeCsv(Path file, List<Result> results) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(HEADER);
            w.write('\n');
            for (Result r : results) {
                w.write(r.csv());
                w.write('\n');
            }
        }
    }

    /** Reads a file {@link #writeCsv} wrote. */
    static List<Result> readCsv(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw new IOException(file + " does not start with " + HEADER);
        }
        List<Result> out = new ArrayList<>();
        for (String l : lines.subList(1, lines.size())) {
            if (!l.isEmpty()) {
                out.add(parse(l));
            }
        }
        return out;
    }
}
