package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.WorkCompletion;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Bounded waits on observable conditions, so the tests never sleep to synchronise. */
final class Await {
    /** Long enough for anything that is not stuck, short enough to fail inside the test timeouts. */
    static final long DEFAULT_NS = TimeUnit.SECONDS.toNanos(10);

    private Await() {
    }

    /** Waits until {@code condition} holds, checking every 50 µs; fails with {@code what} after {@code timeoutNs}. */
    static void until(BooleanSupplier condition, long timeoutNs, String what) {
        long deadline = System.nanoTime() + timeoutNs;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms waiting for " + what);
            }
            LockSupport.parkNanos(50_000);
        }
    }

    static void until(BooleanSupplier condition, String what) {
        until(condition, DEFAULT_NS, what);
    }

    /**
     * Polls {@code cq} (spinning) until one completion arrives and leaves it in {@code wc[0]}; fails on a
     * poll error or after {@code timeoutNs}. Allocates nothing, so stress loops can use it.
     */
    static WorkCompletion one(CompletionQueue cq, WorkCompletion[] wc, long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        int spins = 0;
        while (true) {
            int n = cq.poll(wc, 1);
            if (n == 1) {
                return wc[0];
            }
            assertTrue(n == 0, () -> "poll failed: " + Errno.name(n));
            if ((++spins & 0xff) == 0 && System.nanoTime() - deadline > 0) {
                fail("no completion within " + TimeUnit.NANOSECONDS.toMillis(timeoutNs) + " ms");
            }
            Thread.onSpinWait();
        }
    }

    static WorkCompletion one(CompletionQueue cq, WorkCompletion[] wc) {
        return one(cq, wc, DEFAULT_NS);
    }

    /** A fresh one-element poll array. */
    static WorkCompletion[] pollArray() {
        return new WorkCompletion[] {new WorkCompletion()};
    }
}
