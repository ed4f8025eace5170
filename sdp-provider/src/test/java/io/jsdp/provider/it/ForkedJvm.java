package io.jsdp.provider.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A forked JVM of an integration test, whose output lines a daemon thread collects. */
final class ForkedJvm implements AutoCloseable {
    final Process process;
    final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final List<String> transcript = new ArrayList<>();

    /** The jsdp jar the module's package phase built. */
    static final java.nio.file.Path JAR = java.nio.file.Path.of("target", "jsdp.jar").toAbsolutePath();
    /** The module's compiled test classes (the forked mains). */
    static final String TEST_CLASSES = java.nio.file.Path.of("target", "test-classes").toAbsolutePath().toString();

    /**
     * The command line of a JVM running {@code main} with the test classes, the jsdp jar and this
     * JVM's class path.
     *
     * @param main the class whose {@code main} runs
     * @param heap its {@code -Xmx} value
     * @param jvmArgs options before the class path
     * @param args the main's arguments
     * @return the command
     */
    static List<String> command(Class<?> main, String heap, List<String> jvmArgs, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(TEST_CLASSES + java.io.File.pathSeparator + JAR + java.io.File.pathSeparator
            + System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        return cmd;
    }

    ForkedJvm(List<String> cmd) throws IOException {
        process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null;) {
                    lines.add(l);
                }
            } catch (IOException ended) {
                // killed
            }
        });
        t.setDaemon(true);
        t.start();
    }

    /** The first output line starting with {@code prefix}, waiting up to 60 s; fails with the transcript. */
    String await(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (;;) {
            String l = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (l == null) {
                throw new AssertionError("no '" + prefix + "' from " + process.pid() + "; output: " + transcript);
            }
            transcript.add(l);
            if (l.startsWith(prefix)) {
                return l;
            }
        }
    }

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
