package io.jsdp.zcopy;

/**
 * Adaptive spinning for a thread that waits on zero-copy transfers: how much longer than the engine's
 * spin window it should poll before it parks. A park and the wake-up after it cost tens of
 * microseconds on a virtual machine — as much as an RDMA READ of a MiB — and each side that parks
 * makes the other wait longer, so that it parks too; polling through the expected time avoids both.
 *
 * <p>The owner feeds samples of how long the awaited event took ({@link #learn}, kept as a moving
 * average, a quarter per sample) and asks for advice with the time it expects the event at; the advice
 * reaches to that time, at most the cap. Advice that did not see the event in time ({@link #onEvent}
 * later than the advised deadline: the peer was descheduled or parked — on a loaded machine its
 * wake-up needs the CPU the poller holds) turns the advice off for the next events, twice as many each
 * time up to {@value #MAX_BACKOFF}; advice that did turns it back on (the adaptive spinning of JVM
 * monitors). Not thread-safe: used under the connection's lock; allocates nothing.
 */
final class SpinAdvisor {
    /** The most events the advice stays off after polling that did not pay. */
    static final int MAX_BACKOFF = 64;

    private long average;
    private boolean advised;
    private long deadline;
    private int skip;
    private int backoff;
    private long advices;
    private long misses;

    /**
     * Folds a sample into the average.
     *
     * @param sample how long the event took, in the owner's unit; ignored unless positive
     */
    void learn(long sample) {
        if (sample > 0) {
            average = average == 0 ? sample : average + (sample - average) / 4;
        }
    }

    /** The average of the samples, 0 before the first. */
    long average() {
        return average;
    }

    /**
     * How long to poll beyond the spin window.
     *
     * @param nowNs now
     * @param expectedNs when the event is expected, at the latest
     * @param spinNs the engine's spin window, polled first (0: the application wants no polling)
     * @param capNs the most to advise
     * @return nanoseconds beyond the spin window, 0 for none
     */
    long advise(long nowNs, long expectedNs, long spinNs, long capNs) {
        if (average == 0 || capNs <= 0 || spinNs <= 0 || skip > 0) {
            return 0;
        }
        long left = Math.min(capNs, expectedNs - nowNs - spinNs);
        if (left <= 0) {
            return 0;
        }
        advised = true;
        deadline = nowNs + spinNs + left;
        advices++;
        return left;
    }

    /**
     * The awaited event happened.
     *
     * @param nowNs now
     */
    void onEvent(long nowNs) {
        if (advised) {
            advised = false;
            if (nowNs - deadline <= 0) {
                backoff = 0;
            } else {
                misses++;
                backoff = Math.min(MAX_BACKOFF, Math.max(1, backoff * 2));
                skip = backoff;
            }
        } else if (skip > 0) {
            skip--;
        }
    }

    /** The advice is off for this many more events. */
    int skipping() {
        return skip;
    }

    String describe() {
        return "average=" + average + " advices=" + advices + " misses=" + misses + " skip=" + skip;
    }
}
