package io.jsdp.testbed.shm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A forked JVM running {@link ShmChild} (or another test main): its output is read by a daemon thread,
 * so the test never blocks in an uninterruptible pipe read, and {@link #close()} kills it (SIGKILL)
 * and reaps it.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> transcript = new ArrayList<>();

    private ChildJvm(Process process) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ended) {
                // the child was killed
            }
        }, "child-output-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code ShmChild <args>} with this JVM's classpath. */
    static ChildJvm start(String... args) throws IOException {
        return start(ShmChild.class, args);
    }

    /**
     * Starts {@code main} with this JVM's classpath.
     *
     * @param main a class with a {@code main} method
     * @param args its arguments
     * @return the running child
     * @throws IOException when it cannot be started
     */
    public static ChildJvm start(Class<?> main, String... args) throws IOException {
        return start(List.of(), main, args);
    }

    /**
     * Starts {@code main} with this JVM's classpath and extra JVM options, which come after the
     * defaults and so override them (e.g. {@code -Xmx512m}).
     *
     * @param jvmOptions options such as {@code -Xmx512m} or {@code -Dname=value}
     * @param main a class with a {@code main} method
     * @param args its arguments
     * @return the running child
     * @throws IOException when it cannot be started
     */
    public static ChildJvm start(List<String> jvmOptions, Class<?> main, String... args) throws IOException {
        return startWrapped(List.of(), jvmOptions, main, args);
    }

    /**
     * {@link #start(List, Class, String...)} run by a wrapper command that execs it, such as
     * {@code ip netns exec <name>} (the child is then in that network namespace).
     *
     * @param wrapper the command and its arguments before the JVM's
     * @param jvmOptions options such as {@code -Xmx512m} or {@code -Dname=value}
     * @param main a class with a {@code main} method
     * @param args its arguments
     * @return the running child
     * @throws IOException when it cannot be started
     */
    public static ChildJvm startWrapped(List<String> wrapper, List<String> jvmOptions, Class<?> main, String... args)
        throws IOException {
        List<String> cmd = new ArrayList<>(wrapper);
        cmd.add(System.getProperty("java.home") + "/bin/java");
        // small and quiet: fewer GC threads, so the child's own CPU use is its waiter's
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-Xmx64m");
        cmd.add("-Xshare:auto");
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        return new ChildJvm(new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    /**
     * The child's pid.
     *
     * @return the pid
     */
    public long pid() {
        return process.pid();
    }

    /**
     * The next line starting with {@code prefix} (earlier lines are kept for the transcript).
     *
     * @param prefix what the line starts with
     * @param timeout how long to wait
     * @param unit the unit of {@code timeout}
     * @return the line
     * @throws InterruptedException when interrupted
     * @throws AssertionError with the child's output when it does not come in time
     */
    public String awaitLine(String prefix, long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        for (;;) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
            if (line == null) {
                throw new AssertionError("child " + process.pid() + " did not print '" + prefix + "' within " + timeout + " "
                    + unit + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")") + "; output: " + transcript);
            }
            transcript.add(line);
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    /**
     * Kills the child with SIGKILL (no shutdown hooks, as a crash) and reaps it.
     *
     * @throws InterruptedException when interrupted
     */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new AssertionError("child " + process.pid() + " survived SIGKILL");
        }
    }

    /**
     * Waits for the child to end by itself.
     *
     * @param timeout the longest wait
     * @param unit its unit
     * @return the exit status
     * @throws InterruptedException when interrupted
     * @throws AssertionError with the child's output when it does not end in time
     */
    public int awaitExit(long timeout, TimeUnit unit) throws InterruptedException {
        if (!process.waitFor(timeout, unit)) {
            throw new AssertionError("child " + process.pid() + " did not exit within " + timeout + " " + unit
                + "; output: " + transcript);
        }
        return process.exitValue();
    }

    /** Kills the child if it still runs; keeps the caller's interrupt status. */
    @Override
    public void close() {
        process.destroyForcibly();
        boolean interrupted = false;
        for (;;) {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("child " + process.pid() + " survived SIGKILL");
                }
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
