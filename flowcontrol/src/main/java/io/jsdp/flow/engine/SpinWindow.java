package io.jsdp.flow.engine;

/**
 * One connection's spin window: how long its next blocked operation polls before it parks, learnt
 * from how its recent waits ended (issue 27: spin only when it pays). A wait that the spin window
 * covered (a hit) sets the window back to the configured one; a wait that outlasted it (a miss: the
 * spin was wasted CPU) halves it, and below {@link #MIN_NS} it is 0: the connection parks at once,
 * except that every {@link #PROBE_EVERY}th wait spins the whole window again to see whether the
 * peer has become quick. So a request/response peer that answers in microseconds keeps the window,
 * and one that thinks for a millisecond costs five wasted spins, then one in {@link #PROBE_EVERY}.
 *
 * <p>Also a selector's, for its selections ({@code io.jsdp.provider.HybridSelector}).
 *
 * <p>Threads: the connection's waiting threads (a reader and a writer may wait at once) update it
 * without a lock. Their races lose an update at worst, which a heuristic can afford; every field is
 * a single aligned primitive, so no value is ever torn.
 */
public final class SpinWindow {
    /** A window this short is not worth a turn of the loop: park at once. */
    static final long MIN_NS = 1_000;
    /** With the window at 0, one wait in this many spins the whole window (a power of two). */
    static final int PROBE_EVERY = 32;

    private final long maxNs;
    private long windowNs;
    private int parkedAtOnce;
    private long hits;
    private long misses;

    /**
     * A window of {@code maxNs} to start with.
     *
     * @param maxNs the configured window ({@link SdpOptions#spinNs()}); 0 never spins
     */
    public SpinWindow(long maxNs) {
        this.maxNs = maxNs;
        this.windowNs = maxNs;
    }

    /**
     * The window for the wait starting now.
     *
     * @return nanoseconds to spin, 0 to park at once
     */
    public long next() {
        long w = windowNs;
        if (w != 0 || maxNs == 0) {
            return w;
        }
        return (++parkedAtOnce & (PROBE_EVERY - 1)) == 0 ? maxNs : 0;
    }

    /** The wait ended inside the window. */
    public void hit() {
        hits++;
        windowNs = maxNs;
    }

    /** The window passed without the event: the thread parks. */
    public void miss() {
        misses++;
        long w = windowNs / 2;
        windowNs = w < MIN_NS ? 0 : w;
    }

    /**
     * The current window, hits and misses, for snapshots.
     *
     * @return one line
     */
    public String describe() {
        return "spin window=" + windowNs + "ns of " + maxNs + " hits=" + hits + " misses=" + misses;
    }
}
