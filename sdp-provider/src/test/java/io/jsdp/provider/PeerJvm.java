package io.jsdp.provider;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link ConformancePeer} in a forked JVM with this JVM's class path: commands go to its stdin, its
 * output is read by a daemon thread (so a test never blocks in a pipe read), and {@link #close()} kills
 * it with SIGKILL and reaps it.
 */
final class PeerJvm implements AutoCloseable {
    private static final long ANSWER_SECONDS = 20;
    private final String kind;
    private final Process process;
    private final PrintStream commands;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> transcript = new ArrayList<>();

    PeerJvm(String kind) throws IOException, InterruptedException {
        this(kind, List.of());
    }

    /** A peer whose JVM gets {@code jvmArgs} too (system properties, say). */
    PeerJvm(String kind, List<String> jvmArgs) throws IOException, InterruptedException {
        this(kind, jvmArgs, List.of());
    }

    /**
     * A peer whose JVM gets {@code jvmArgs} and is started through {@code launcher} (a command that runs
     * the rest of its command line, such as {@code unshare}); the launcher must end the JVM when it is killed.
     */
    PeerJvm(String kind, List<String> jvmArgs, List<String> launcher) throws IOException, InterruptedException {
        this.kind = kind;
        List<String> cmd = new ArrayList<>(launcher);
        cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:+UseSerialGC", "-Xmx128m"));
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ConformancePeer.class.getName(), kind));
        process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        commands = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null;) {
                    lines.add(l);
                }
            } catch (IOException ended) {
                // killed
            }
        }, "peer-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        next("READY");
    }

    String kind() {
        return kind;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Sends a command without waiting for its answer ({@link #answer(String)} takes it). */
    void send(String command) {
        commands.println(command);
    }

    /** The value of the next answer, which must be OK for {@code command}. */
    String answer(String command) throws InterruptedException {
        String l = next("OK " + command + " ", "EX " + command + " ");
        if (!l.startsWith("OK ")) {
            throw new AssertionError(kind + " peer: " + l + "; output: " + transcript);
        }
        return l.substring(("OK " + command + " ").length());
    }

    /** The next answer for {@code command}, OK or EX, without its prefix: {@code OK value} or {@code EX class message}. */
    String outcome(String command) throws InterruptedException {
        String l = next("OK " + command + " ", "EX " + command + " ");
        return l.substring(0, 3) + l.substring(3 + command.length() + 1);
    }

    /** Sends {@code command} and returns the value of its OK answer. */
    String call(String command) throws InterruptedException {
        send(command);
        return answer(command.split(" ")[0]);
    }

    private String next(String... prefixes) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ANSWER_SECONDS);
        for (;;) {
            long left = deadline - System.nanoTime();
            String l = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (l == null) {
                throw new AssertionError(kind + " peer " + process.pid() + " did not answer " + List.of(prefixes)
                    + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")") + "; output: " + transcript);
            }
            transcript.add(l);
            for (String p : prefixes) {
                if (l.startsWith(p)) {
                    return l;
                }
            }
        }
    }

    /** Ends its stdin: the peer closes every connection and its {@code main} returns (a normal exit). */
    void endInput() {
        commands.close();
    }

    /**
     * Waits until the process has ended by itself.
     *
     * @return its exit value
     */
    int awaitExit() throws InterruptedException {
        if (!process.waitFor(ANSWER_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError(kind + " peer " + process.pid() + " did not exit; output: " + transcript);
        }
        return process.exitValue();
    }

    /** SIGKILL, as a crash: no shutdown hooks, no close; waits until it is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new AssertionError(kind + " peer " + process.pid() + " survived SIGKILL");
        }
    }

    /** Kills it if it still runs; keeps the caller's interrupt status. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
