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

    /**
     * {@link #parked}: a wait that parked at once and was woken within this many windows came quickly
     * enough that spinning would have caught it, had the peer been spinning too.
     */
    static final int SHORT_PARK_WINDOWS = 4;
    /** {@link #parked}: this many such waits in a row restore the window. */
    static final int SHORT_PARKS_TO_RESTORE = 2;

    private long maxNs;
    private int shortParks;
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

    /**
     * A wait that found the window at 0 parked and was woken after {@code waitedNs}. Two peers that
     * both park answer each other only after a wake-up each, so each one's spin, should it probe
     * alone, misses, and neither window comes back; a wait woken within {@link #SHORT_PARK_WINDOWS}
     * windows, {@link #SHORT_PARKS_TO_RESTORE} times in a row, says the answers come quickly and
     * restores the window (a peer that thinks longer halves it away again within a few waits).
     *
     * @param waitedNs how long the parked wait lasted
     */
    public void parked(long waitedNs) {
        if (windowNs != 0 || maxNs == 0) {
            return;
        }
        if (waitedNs > SHORT_PARK_WINDOWS * maxNs) {
            shortParks = 0;
            return;
        }
        if (++shortParks >= SHORT_PARKS_TO_RESTORE) {
            shortParks = 0;
            windowNs = maxNs;
        }
    }

    /**
     * Sets the configured window (a socket option changed at run time); the learnt one starts again
     * from it.
     *
     * @param ns the new window; 0 never spins
     */
    public void configure(long ns) {
        maxNs = ns;
        windowNs = ns;
        shortParks = 0;
    }

    /**
     * The configured window.
     *
     * @return nanoseconds; 0: never spins
     */
    public long maxNs() {
        return maxNs;
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
