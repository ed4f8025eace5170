package io.jsdp.zcopy;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** A thread per task (never the common pool: on 2 cores it may have one worker). */
final class TestThreads {
    static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "zcopy-test-task");
        t.setDaemon(true);
        return t;
    });

    private TestThreads() {
    }
}
