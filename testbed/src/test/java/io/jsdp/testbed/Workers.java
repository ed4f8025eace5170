package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs test workers on their own threads and joins them within a deadline. A worker that throws fails
 * the test with its exception; a worker still running at the deadline fails it with every thread's
 * stack (the picture of a deadlock or a lost wake-up).
 */
final class Workers {
    /** A worker's body. */
    interface Task {
        void run() throws Exception;
    }

    private Workers() {
    }

    /**
     * A random pause of one of four kinds (none, one spin hint, a yield, a park of up to
     * {@code maxParkNs}), so racing threads meet at varied points of each other's code.
     */
    static void randomPause(SplittableRandom random, int maxParkNs) {
        switch (random.nextInt(4)) {
            case 0:
                break;
            case 1:
                Thread.onSpinWait();
                break;
            case 2:
                Thread.yield();
                break;
            default:
                LockSupport.parkNanos(random.nextInt(maxParkNs));
                break;
        }
    }

    static void run(long timeoutNs, Task... tasks) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread[] threads = new Thread[tasks.length];
        for (int i = 0; i < tasks.length; i++) {
            Task task = tasks[i];
            threads[i] = new Thread(() -> {
                try {
                    task.run();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "test-worker-" + i);
            threads[i].setDaemon(true);
        }
        for (Thread t : threads) {
            t.start();
        }
        long deadline = System.nanoTime() + timeoutNs;
        for (Thread t : threads) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMs > 0) {
                t.join(leftMs);
            }
        }
        Throwable first = failure.get();
        if (first != null) {
            if (first instanceof Exception e) {
                throw e;
            }
            if (first instanceof Error e) {
                throw e;
            }
            throw new AssertionError(first);
        }
        for (Thread t : threads) {
            if (t.isAlive()) {
                String dump = allStacks();
                for (Thread u : threads) {
                    u.interrupt();
                }
                fail(t.getName() + " still running after " + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms:\n" + dump);
            }
        }
    }

    /** One round of a race: what the two racing threads do, set up and checked by the caller's thread. */
    interface Round {
        /** Prepares round {@code i} before the threads are released. */
        void setUp(int i) throws Exception;

        /** What racer 0 or 1 does in the current round. */
        void race(int racer) throws Exception;

        /** Checks the outcome of round {@code i} after both racers finished. */
        void check(int i) throws Exception;
    }

    /**
     * Runs {@code rounds} rounds of a two-thread race: a helper thread and the driving thread, which sets
     * each round up, releases the helper through a shared generation number the helper spins on, races
     * itself and checks. Both enter {@link Round#race} within a fraction of a microsecond (a barrier's
     * wake-up would separate them by tens of microseconds and hide most races); the driver shifts its
     * start by 0 to 63 spins from round to round to sweep the racers' relative timing.
     */
    static void race(int rounds, long timeoutNs, Round round) throws Exception {
        java.util.concurrent.atomic.AtomicInteger generation = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
        Task helper = () -> {
            for (int g = 1; g <= rounds; g++) {
                for (int spins = 0; generation.get() < g; spins++) {
                    if (failed.get()) {
                        return;
                    }
                    backOff(spins);
                }
                try {
                    round.race(0);
                } finally {
                    finished.set(g);
                }
            }
        };
        Task driver = () -> {
            try {
                for (int i = 0; i < rounds; i++) {
                    round.setUp(i);
                    generation.set(i + 1);
                    for (int k = i & 63; k > 0; k--) {
                        Thread.onSpinWait();
                    }
                    round.race(1);
                    long deadline = System.nanoTime() + timeoutNs;
                    for (int spins = 0; finished.get() <= i; spins++) {
                        if (System.nanoTime() - deadline > 0) {
                            fail("round " + i + " did not finish");
                        }
                        backOff(spins);
                    }
                    round.check(i);
                }
            } catch (Throwable e) {
                failed.set(true);
                throw e;
            }
        };
        run(timeoutNs, helper, driver);
    }

    /** Spins for a while (racers released together stay on their cores), then yields (three threads, two cores). */
    private static void backOff(int spins) {
        if (spins < 10_000) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }

    private static String allStacks() {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            String name = e.getKey().getName();
            if (!name.startsWith("test-worker") && !name.startsWith("jsdp-")) {
                continue;
            }
            out.append('"').append(name).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement f : e.getValue()) {
                out.append("\tat ").append(f).append('\n');
            }
        }
        return out.toString();
    }
}
