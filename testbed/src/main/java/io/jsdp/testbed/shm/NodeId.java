package io.jsdp.testbed.shm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

/**
 * A process on the shared-memory fabric: its pid and a stamp of when it started, so a recycled pid
 * is never mistaken for the process that owned a segment (seed 000, owner tracking).
 *
 * <p>Where {@code /proc} exists (Linux) the stamp is the kernel's {@code starttime} of the process,
 * in clock ticks since boot (field 22 of {@code /proc/<pid>/stat}): exact and identical whoever reads
 * it, so liveness is an exact comparison. Elsewhere it is {@link ProcessHandle.Info#startInstant()}
 * in epoch milliseconds, which the JDK derives from a boot time it reads once per JVM; two JVMs may
 * disagree by a second, so that fallback compares with slack. All processes on one host use the same
 * form.
 *
 * @param pid the process id (positive)
 * @param start the start stamp (0 when the OS does not say)
 */
public record NodeId(long pid, long start) {
    /** Slack for the epoch-millisecond fallback (see the class comment). */
    private static final long FALLBACK_SLACK_MS = 2_000;
    /** Whether stamps come from {@code /proc} on this host; decided once. */
    private static final boolean PROC = Files.isReadable(Path.of("/proc/self/stat"));
    private static final NodeId CURRENT = computeCurrent();

    /**
     * Checks the components.
     *
     * @param pid the process id (positive)
     * @param start the start stamp (not negative)
     */
    public NodeId {
        if (pid <= 0 || start < 0) {
            throw new IllegalArgumentException("bad node id " + pid + "-" + start);
        }
    }

    /**
     * The current process.
     *
     * @return its id
     */
    public static NodeId current() {
        return CURRENT;
    }

    private static NodeId computeCurrent() {
        long pid = ProcessHandle.current().pid();
        return new NodeId(pid, Math.max(0, startOf(pid)));
    }

    /**
     * The start stamp of process {@code pid}: -1 when it does not exist or is a zombie (a zombie has
     * already released its memory and sockets: it is dead for the fabric), 0 when the OS does not say.
     */
    private static long startOf(long pid) {
        if (PROC) {
            return procStart(pid);
        }
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isEmpty() || !h.get().isAlive()) {
            return -1;
        }
        return h.get().info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    }

    /** {@code starttime} from {@code /proc/<pid>/stat}, -1 when gone or a zombie. */
    private static long procStart(long pid) {
        String stat;
        try {
            stat = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "stat")), StandardCharsets.US_ASCII);
        } catch (IOException gone) {
            return -1;
        }
        // "pid (comm) state ppid ...": comm may hold spaces and ')', so fields count from the last ')'.
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 >= stat.length()) {
            return -1;
        }
        String[] fields = stat.substring(close + 2).split(" ");
        // fields[0] is field 3 (state), so field 22 (starttime) is fields[19]
        if (fields.length < 20) {
            return -1;
        }
        char state = fields[0].isEmpty() ? '?' : fields[0].charAt(0);
        if (state == 'Z' || state == 'X' || state == 'x') {
            return -1;
        }
        try {
            return Long.parseLong(fields[19]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Whether the process is still running and is the same process, not a recycled pid. A zombie
     * counts as dead.
     *
     * @return true while it lives
     */
    public boolean isAlive() {
        long now = startOf(pid);
        if (now < 0) {
            return false;
        }
        if (start == 0 || now == 0) {
            return true; // the OS does not say when processes start: the pid is all we have
        }
        return PROC ? now == start : Math.abs(now - start) < FALLBACK_SLACK_MS;
    }

    /**
     * The file-name form, {@code <pid>-<start>}.
     *
     * @return the token
     */
    public String token() {
        return pid + "-" + start;
    }

    /**
     * Parses {@link #token()}. Only the canonical form is accepted (decimal digits, no sign, no
     * leading zeros), so one process never has two spellings in the rendezvous directory.
     *
     * @param token the token
     * @return the id, or null when the text is not a token
     */
    public static NodeId parse(String token) {
        int dash = token.indexOf('-');
        if (dash <= 0 || !digits(token, 0, dash) || !digits(token, dash + 1, token.length())) {
            return null;
        }
        try {
            long pid = Long.parseLong(token, 0, dash, 10);
            long start = Long.parseLong(token, dash + 1, token.length(), 10);
            if (pid <= 0) {
                return null;
            }
            NodeId id = new NodeId(pid, start);
            return id.token().equals(token) ? id : null;
        } catch (NumberFormatException overflow) {
            return null;
        }
    }

    private static boolean digits(String s, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "node-" + token();
    }
}
