package io.jsdp.bench.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code --load N}: a JVM of its own running N plain busy loops (platform threads at the JVM's nice
 * value, unpinned, never yielding or sleeping), the foreign load real machines have. It runs for the
 * whole of a series (both benchmark JVMs' start, warm-up and every point) and ends when its standard
 * input closes. Its own CPU time is subtracted from the CPU per operation ({@link CpuMeter}).
 */
final class Load {
    private static volatile boolean stop;
    /** Written by the loops so that the JIT keeps them; never read for its value. */
    static volatile long sink;

    private Load() {
    }

    /** Starts {@code n} busy loops (daemon threads) and returns at once. */
    static List<Thread> start(int n) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(Load::spin, "bench-load-" + i);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        return threads;
    }

    private static void spin() {
        long x = 0;
        while (!stop) {
            for (int i = 0; i < 1_000_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            sink = x;
        }
    }

    /** Ends the loops (tests). */
    static void stopAll() {
        stop = true;
    }
}
