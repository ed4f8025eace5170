package io.jsdp.bench.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar bench/target/jsdp-bench.jar <scenario> [options]}: JDK TCP (blocking and
 * busy-polling), Unix-domain sockets and SDP (each variant asked for) measured in one run, each in a
 * fresh pair of JVMs (client and server, started here; {@code --one-jvm}: one JVM), with the same
 * settings; results to standard output, {@code --csv} and {@code --report}. Usage:
 * {@link Options#USAGE}; the scenarios, the CSV columns and the variant registry are described in
 * {@code docs/benchmarks.md}.
 */
public final class JsdpBench {
    private static final long START_TIMEOUT_MS = 60_000;

    private JsdpBench() {
    }

    /**
     * Runs the command line.
     *
     * @param args see {@link Options#USAGE}
     */
    public static void main(String[] args) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("jsdp-bench: " + e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        if (o.help) {
            System.out.println(Options.USAGE);
            return;
        }
        if (o.listVariants) {
            for (String n : SdpVariant.names()) {
                SdpVariant v = SdpVariant.named(n);
                System.out.println(n + "  " + (v.jvmOptions().isEmpty() ? "(no properties)" : String.join(" ", v.jvmOptions())));
                System.out.println("    " + v.description());
            }
            return;
        }
        if (o.rounds > 0) {
            try {
                AbRounds.run(o);
            } catch (Exception e) {
                System.err.println("jsdp-bench: FAILED: " + e.getMessage());
                e.printStackTrace();
                System.exit(1);
            }
            return;
        }
        try {
            Environment env = run(o);
            System.out.println();
            System.out.print(Report.summary(env.results));
            String warning = Report.loadWarning(env);
            if (warning != null) {
                System.out.println("# " + warning);
            }
            if (o.csv != null) {
                Result.writeCsv(o.csv, env.results);
                System.out.println("# CSV: " + o.csv);
            }
            if (o.report != null) {
                Path md = Report.write(o.report, o, env);
                System.out.println("# report: " + md);
            }
        } catch (Exception e) {
            System.err.println("jsdp-bench: FAILED: " + e.getMessage());
            e.printStackTrace();
            System.exit(1);
        }
    }

    /** What a run measured and the facts the report states about it. */
    static final class Environment {
        final List<Result> results = new ArrayList<>();
        final List<String> placements = new ArrayList<>();
        final List<String> waits = new ArrayList<>();
        String started;
        String ended;
        String loadBefore;
        String loadAfter;
        String jdk;
        String sdpTransport;
        String cpu;
        String command;
        /** With {@code --forks} above 1: each fork's own results ({@link #results} holds their medians). */
        final List<List<Result>> forks = new ArrayList<>();
    }

    static Environment run(Options o) throws IOException, InterruptedException {
        if (o.pin && !Files.isExecutable(Path.of("/usr/bin/taskset")) && !Files.isExecutable(Path.of("/bin/taskset"))) {
            throw new IOException("--pin needs taskset (util-linux), which is not installed");
        }
        Environment env = new Environment();
        env.started = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        env.loadBefore = loadAverage();
        env.cpu = cpuModel();
        env.command = command(o);
        System.out.println("# jsdp-bench " + env.command);
        System.out.println("# " + env.started + ", load average " + env.loadBefore + ", " + env.cpu);
        for (int f = 1; f <= o.forks; f++) {
            if (o.forks > 1) {
                System.out.println("# fork " + f + " of " + o.forks);
            }
            int first = env.results.size();
            for (Transport t : o.transports) {
                if (t == Transport.SDP) {
                    for (SdpVariant v : o.sdpVariants) {
                        runOne(o, env, t, v);
                    }
                } else {
                    runOne(o, env, t, null);
                }
            }
            env.forks.add(new ArrayList<>(env.results.subList(first, env.results.size())));
        }
        if (o.forks > 1) {
            env.results.clear();
            env.results.addAll(Result.medians(env.forks));
        }
        env.ended = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        env.loadAfter = loadAverage();
        System.out.println("# done " + env.ended + ", load average " + env.loadAfter);
        return env;
    }

    private static void runOne(Options o, Environment env, Transport t, SdpVariant v)
        throws IOException, InterruptedException {
        runOne(o, env, t, v, List.of());
    }

    /**
     * Runs every scenario of {@code o} over one series in fresh JVMs, adding the results to {@code env}.
     *
     * @param extraJvmArgs options for both JVMs after {@code --jvm-arg}'s (the B arm of an A/B run)
     */
    static void runOne(Options o, Environment env, Transport t, SdpVariant v, List<String> extraJvmArgs)
        throws IOException, InterruptedException {
        String variant = v == null ? Result.NO_VARIANT : v.name();
        String series = v == null ? t.id() : t.id() + "/" + variant;
        env.waits.add(series + ": " + t.waits(v));
        long points = 0;
        for (Scenario s : o.scenarios) {
            points += s == Scenario.PROGRESS ? o.computesUs.length : s == Scenario.CONNECT ? 1 : o.sizes.get(s).length;
        }
        long budgetMs = START_TIMEOUT_MS + points * (o.warmupMs + o.durationMs + 30_000);
        try (Child load = o.load > 0 ? Child.start(null, o, null, List.of(), List.of("load", Integer.toString(o.load))) : null) {
            List<String> opts = new ArrayList<>(o.childArgs());
            if (load != null) {
                load.await(Worker.INFO + " pid=", START_TIMEOUT_MS);
                opts.addAll(List.of(Options.LOAD_PID, Long.toString(load.pid())));
                env.placements.add(series + ": load pid " + load.pid() + ", " + o.load + " busy loop(s), unpinned, nice 0");
            }
            runWorkers(o, env, t, v, extraJvmArgs, series, variant, budgetMs, opts);
        }
    }

    private static void runWorkers(Options o, Environment env, Transport t, SdpVariant v, List<String> extraJvmArgs,
        String series, String variant, long budgetMs, List<String> opts) throws IOException, InterruptedException {
        if (o.oneJvm) {
            List<String> args = new ArrayList<>(List.of("both", t.id(), variant));
            args.addAll(opts);
            try (Child both = Child.start(o.pin ? "0,1" : null, o, v, extraJvmArgs, args)) {
                both.await(Worker.INFO + " pid=", START_TIMEOUT_MS); // taskset has exec'd the JVM by now
                env.placements.add(series + ": one JVM, pid " + both.pid() + " on CPUs " + both.cpus()
                    + (o.pin ? " (taskset -c 0,1; client and server threads not pinned apart)" : " (unpinned)"));
                collect(both, env, budgetMs);
            }
            return;
        }
        List<String> serverArgs = new ArrayList<>(List.of("server", t.id(), variant));
        serverArgs.addAll(opts);
        try (Child server = Child.start(o.pin ? "1" : null, o, v, extraJvmArgs, serverArgs)) {
            String listening = server.await(Worker.LISTENING, START_TIMEOUT_MS);
            String address = listening.substring(Worker.LISTENING.length()).trim();
            List<String> clientArgs = new ArrayList<>(List.of("client", t.id(), variant, address));
            clientArgs.addAll(opts);
            try (Child client = Child.start(o.pin ? "0" : null, o, v, extraJvmArgs, clientArgs)) {
                client.await(Worker.INFO + " pid=", START_TIMEOUT_MS); // taskset has exec'd the JVM by now
                env.placements.add(series + ": client pid " + client.pid() + " on CPUs " + client.cpus()
                    + ", server pid " + server.pid() + " on CPUs " + server.cpus()
                    + (o.pin ? " (taskset)" : " (unpinned)"));
                collect(client, env, budgetMs);
                server.check();
            }
        }
    }

    private static void collect(Child c, Environment env, long budgetMs) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMs);
        while (true) {
            String line = c.next(deadline);
            if (line.equals(Worker.DONE)) {
                return;
            }
            if (line.startsWith(Worker.RESULT + " ")) {
                Result r = Result.parse(line.substring(Worker.RESULT.length() + 1));
                env.results.add(r);
                if (!r.metric().equals("samples")) {
                    System.out.println(String.format(Locale.ROOT, "%-9s %-16s %8d  %-12s %12s %s", r.scenario(),
                        r.series(), r.size(), r.metric(), Result.format(r.value()), r.unit()));
                }
            } else if (line.startsWith(Worker.INFO + " jdk=")) {
                env.jdk = line.substring((Worker.INFO + " jdk=").length());
            } else if (line.startsWith(Worker.INFO + " sdp=")) {
                env.sdpTransport = line.substring((Worker.INFO + " sdp=").length());
            } else if (!line.startsWith(Worker.INFO + " ")) {
                System.out.println("[worker " + c.pid() + "] " + line);
            }
        }
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    static String cpuModel() {
        int n = Runtime.getRuntime().availableProcessors();
        String model = "unknown CPU";
        try {
            for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (l.startsWith("model name")) {
                    model = l.substring(l.indexOf(':') + 1).trim();
                    break;
                }
            }
        } catch (IOException e) {
            // not Linux: the count is still right
        }
        return n + " CPUs, " + model;
    }

    static String command(Options o) {
        List<String> parts = new ArrayList<>(o.childArgs());
        return String.join(" ", parts.subList(0, 1)) + " transports=" + o.transports.stream().map(Transport::id)
            .reduce((a, b) -> a + "," + b).orElse("") + " sdp-variants=" + o.sdpVariants.stream().map(SdpVariant::name)
            .reduce((a, b) -> a + "," + b).orElse("") + (o.quick ? " quick" : "") + (o.oneJvm ? " one-jvm" : " two-jvms")
            + (o.pin ? " pinned" : " unpinned") + " io=" + o.io.id() + (o.io.eventLoop() ? " connections="
            + o.connections : "") + " load=" + o.load + (o.forks > 1 ? " forks=" + o.forks : "") + (o.streamNagle ? " stream-nagle" : "")
            + (o.streamReadBytes > 0 ? " stream-read-bytes=" + o.streamReadBytes : "") + " buffer=" + (o.direct ? "direct" : "heap") + " warmup=" + o.warmupMs
            + "ms duration=" + o.durationMs + "ms" + (o.jvmArgs.isEmpty() ? "" : " jvm-args=" + String.join(" ", o.jvmArgs));
    }

    /** A worker JVM: its output lines in a queue (a daemon thread reads them), killed on close. */
    static final class Child implements AutoCloseable {
        private final Process process;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private static final String EOF = "\u0000EOF";

        private Child(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the process is gone
                }
                lines.add(EOF);
            }, "jsdp-bench-worker-" + process.pid());
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(String cpus, Options o, SdpVariant v, List<String> extraJvmArgs, List<String> args)
            throws IOException {
            List<String> cmd = new ArrayList<>();
            if (cpus != null) {
                cmd.addAll(List.of("taskset", "-c", cpus));
            }
            cmd.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
            cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"); // first: --jvm-arg may change it
            if (v != null) {
                cmd.addAll(v.jvmOptions());
            }
            cmd.addAll(o.jvmArgs); // last, so they win
            cmd.addAll(extraJvmArgs);
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(Worker.class.getName());
            cmd.addAll(args);
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            return new Child(p);
        }

        long pid() {
            return process.pid();
        }

        /** The CPUs the process may run on ({@code Cpus_allowed_list}); after exec by taskset. */
        String cpus() {
            try {
                for (String l : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                    if (l.startsWith("Cpus_allowed_list:")) {
                        return l.substring(l.indexOf(':') + 1).trim();
                    }
                }
            } catch (IOException e) {
                return "unknown (" + e.getMessage() + ")";
            }
            return "unknown";
        }

        /** The next line, failing when the process ends first or the deadline passes. */
        String next(long deadlineNs) throws IOException, InterruptedException {
            long left = deadlineNs - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new IOException("worker pid " + process.pid() + " gave no result in time; killed");
            }
            if (line.equals(EOF)) {
                throw new IOException("worker pid " + process.pid() + " ended before it was done (exit status "
                    + (process.waitFor(5, TimeUnit.SECONDS) ? process.exitValue() : "none") + "; its stderr is above)");
            }
            return line;
        }

        /** Waits for a line starting with {@code prefix}, skipping others. */
        String await(String prefix, long timeoutMs) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (true) {
                String line = next(deadline);
                if (line.startsWith(prefix)) {
                    return line;
                }
            }
        }

        /** Fails when the process has died (a server that crashed during the run). */
        void check() throws IOException {
            if (!process.isAlive()) {
                throw new IOException("server worker pid " + process.pid() + " died during the run (exit status "
                    + process.exitValue() + ")");
            }
        }

        /** Closes its input (a server's signal to exit), waits up to 5 s, then kills it. */
        @Override
        public void close() {
            try {
                process.getOutputStream().close();
            } catch (IOException e) {
                // gone already
            }
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
