package io.jsdp.verbs;

import java.util.concurrent.atomic.AtomicInteger;

/** The numbers {@link WakeChannel#newWait} hands out. */
final class WaitNumbers {
    private static final int MASK = (1 << 30) - 1;
    private static final AtomicInteger NEXT = new AtomicInteger();

    private WaitNumbers() {
    }

    static int next() {
        for (;;) {
            int n = NEXT.incrementAndGet() & MASK;
            if (n != 0) {
                return n;
            }
        }
    }
}
