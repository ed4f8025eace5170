package io.jsdp.testbed;

import java.util.concurrent.TimeUnit;

/**
 * The waits of one peer process that this process rang lately ({@link io.jsdp.verbs.WakeChannel#arm(
 * boolean, int)}): a ringer that takes another arm of a wait rung less than {@link #WINDOW_NS} ago
 * writes no byte, as its waiter is woken already and finds the taken arm when it disarms. Four slots,
 * by the wait's low bits: a waiter whose slot another took is merely rung again. The window bounds
 * how long a slot is believed, far inside the 2<sup>30</sup> waits before a number comes back.
 */
final class RingMemo {
    static final long WINDOW_NS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final int SLOTS = 4;

    private final long[] rungAtNs = new long[SLOTS];
    private final int[] rungWait = new int[SLOTS];

    /** Whether wait {@code wait} was rung within the window. */
    boolean rungLately(int wait, long nowNs) {
        int i = wait & (SLOTS - 1);
        synchronized (this) {
            return rungWait[i] == wait && nowNs - rungAtNs[i] < WINDOW_NS;
        }
    }

    /** Notes the ring of wait {@code wait} (after its byte was written). */
    void rung(int wait, long nowNs) {
        int i = wait & (SLOTS - 1);
        synchronized (this) {
            rungWait[i] = wait;
            rungAtNs[i] = nowNs;
        }
    }
}
