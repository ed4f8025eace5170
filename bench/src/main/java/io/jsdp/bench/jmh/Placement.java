package io.jsdp.bench.jmh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the two sides of a cross-process benchmark run: the CPUs of the benchmark JVM (the JMH fork)
 * and of the peer, each a {@code taskset} CPU list, or unpinned. On this 2-vCPU VM the placement
 * decides whether a hand-off crosses cores, so every figure must state it
 * ({@code ../shared/reference/performance-baselines.md} §3, §5).
 *
 * <p>Spelled as the benchmarks' {@code placement} parameter:
 * <ul>
 *   <li>{@code unpinned} (default): the scheduler decides;</li>
 *   <li>{@code split}: benchmark on CPU 0, peer on CPU 1;</li>
 *   <li>{@code same}: both on CPU 0 (two spinners then share one CPU: only for contrast);</li>
 *   <li>{@code B/P}: explicit lists, e.g. {@code 1/0} or {@code 0-1/1}.</li>
 * </ul>
 * A peer thread cannot be pinned apart from its JVM: with {@code peer=thread} the whole JVM is
 * confined to the union of both lists.
 *
 * @param name the parameter value as given
 * @param benchCpus the benchmark JVM's CPU list, or null for unpinned
 * @param peerCpus the peer's CPU list, or null for unpinned
 */
record Placement(String name, String benchCpus, String peerCpus) {
    private static final String TASKSET = "taskset";
    /** This JVM's CPUs before any placement: what {@code unpinned} gives back. */
    private static final String STARTING_CPUS = allowedCpus(ProcessHandle.current().pid());

    /**
     * Parses a {@code placement} parameter.
     *
     * @param spec the value
     * @return the placement
     * @throws IllegalArgumentException naming the value when it is none of the accepted forms
     */
    static Placement parse(String spec) {
        switch (spec) {
            case "unpinned":
                return new Placement(spec, null, null);
            case "split":
                return new Placement(spec, "0", "1");
            case "same":
                return new Placement(spec, "0", "0");
            default:
                int slash = spec.indexOf('/');
                if (slash > 0 && slash < spec.length() - 1
                    && cpuList(spec.substring(0, slash)) && cpuList(spec.substring(slash + 1))) {
                    return new Placement(spec, spec.substring(0, slash), spec.substring(slash + 1));
                }
                throw new IllegalArgumentException("placement must be unpinned, split, same or <cpus>/<cpus> "
                    + "(taskset lists such as 0/1), is '" + spec + "'");
        }
    }

    private static boolean cpuList(String s) {
        return s.matches("[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*");
    }

    /** Whether either side is pinned. */
    boolean pinned() {
        return benchCpus != null;
    }

    /**
     * The prefix that starts a peer process under its CPU list.
     *
     * @return {@code taskset -c <list>}, or nothing when unpinned
     */
    List<String> peerCommandPrefix() {
        return pinned() ? List.of(TASKSET, "-c", peerCpus) : List.of();
    }

    /**
     * Confines every thread of this JVM to {@code cpus} (threads created later inherit it), or, for
     * null, gives it back the CPUs it started with: without forking one JVM runs trials of several
     * placements in turn. Does nothing when it has the CPUs already.
     *
     * @param cpus a CPU list, or null for unpinned
     * @throws IOException when {@code taskset} fails or is missing
     * @throws InterruptedException when interrupted while it runs
     */
    static void placeThisJvm(String cpus) throws IOException, InterruptedException {
        String wanted = cpus != null ? cpus : STARTING_CPUS;
        long pid = ProcessHandle.current().pid();
        if (wanted.equals(allowedCpus(pid)) || (cpus == null && wanted.equals("?"))) {
            return;
        }
        Process p = new ProcessBuilder(TASKSET, "-a", "-p", "-c", wanted, Long.toString(pid))
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("taskset -a -p -c " + wanted + " on this JVM failed");
        }
    }

    /**
     * The CPUs a process may run on, as the kernel reports them.
     *
     * @param pid the process
     * @return its {@code Cpus_allowed_list}, or {@code ?} when unreadable
     */
    static String allowedCpus(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            return "?";
        }
        return "?";
    }
}
