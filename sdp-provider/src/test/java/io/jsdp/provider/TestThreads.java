package io.jsdp.provider;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A thread per task for tests whose tasks block on each other. The common pool must not be used for
 * that: on a 2-core machine it may have one worker (JDK 25 runs CompletableFuture's async tasks
 * there), and a task blocked on another that never starts hangs the test.
 */
final class TestThreads {
    /** Daemon threads, created as needed. */
    static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "test-task");
        t.setDaemon(true);
        return t;
    });

    private TestThreads() {
    }
}
