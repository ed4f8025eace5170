package io.jsdp.testbed.shm;

import java.util.concurrent.TimeUnit;

/**
 * Tunables of the shared-memory fabric, read and validated once when a node opens (style habit 10:
 * property and default in pairs, documented in {@code docs/configuration.md}).
 *
 * @param spinNs how long a waiter polls its {@link WaitWord} before it arms and parks; 0 parks at once
 * @param peerCheckMs period of the node's liveness sweep: connected peers are checked for life and
 *     dead processes' files reclaimed; a dead peer whose socket somehow stays open is noticed within it
 * @param parkSafetyNetMs the longest single park of a waiter: a wakeup whose doorbell never came is
 *     found after at most this long (and counted, {@link WaitWord#safetyNetRescues()}: it must not happen)
 * @param sparseReserveBytes free bytes the rendezvous file system must keep beyond a new segment for the
 *     segment to be created sparse (pages allocated on first touch) rather than written with zeros;
 *     -1: always write zeros ({@link SharedSegment}, issue 7)
 */
public record ShmSettings(long spinNs, long peerCheckMs, long parkSafetyNetMs, long sparseReserveBytes) {
    /** Property: spin window of waits, nanoseconds. */
    public static final String SPIN_NS_PROP = "jsdp.soft.spinNs";
    /**
     * Default spin window: none. The waiter is a device's progress thread, a background thread that
     * wakes once per doorbell; spinning 20 µs after each wake took a CPU from the application threads
     * on a 2-CPU host (jsdp-bench progress at 500 µs of computation, three runs each: 0.56-0.63 ms per
     * iteration without it, 0.57-1.08 ms with it; 64 B round trips unchanged, their p99 lower).
     */
    public static final long SPIN_NS_DEFAULT = 0;
    /** Property: period of the peer liveness sweep, milliseconds. */
    public static final String PEER_CHECK_MS_PROP = "jsdp.soft.peerCheckMs";
    /** Default sweep period: 500 ms, so a dead peer is noticed well inside the 2 s bound of issue 3. */
    public static final long PEER_CHECK_MS_DEFAULT = 500;
    /** Property: longest single park of a waiter, milliseconds. */
    public static final String PARK_SAFETY_NET_MS_PROP = "jsdp.soft.parkSafetyNetMs";
    /** Default safety net: 1 s, rare enough to cost nothing, short enough to bound a missed doorbell. */
    public static final long PARK_SAFETY_NET_MS_DEFAULT = 1_000;
    /** Property: free bytes a sparse segment must leave on the rendezvous file system; -1 never sparse. */
    public static final String SPARSE_RESERVE_BYTES_PROP = "jsdp.soft.sparseReserveBytes";
    /**
     * Default reserve: 256 MiB, hundreds of connections' buffers and wires, so the pages a sparse
     * segment allocates later are very unlikely to find the file system full.
     */
    public static final long SPARSE_RESERVE_BYTES_DEFAULT = 256L << 20;

    /**
     * Checks the values.
     *
     * @param spinNs the spin window, at least 0
     * @param peerCheckMs the sweep period, at least 1
     * @param parkSafetyNetMs the longest park, at least 1
     * @param sparseReserveBytes the reserve for sparse segments, at least 0, or -1 for none
     */
    public ShmSettings {
        if (spinNs < 0) {
            throw new IllegalArgumentException(SPIN_NS_PROP + " must be >= 0, is " + spinNs);
        }
        if (peerCheckMs < 1) {
            throw new IllegalArgumentException(PEER_CHECK_MS_PROP + " must be >= 1, is " + peerCheckMs);
        }
        if (parkSafetyNetMs < 1) {
            throw new IllegalArgumentException(PARK_SAFETY_NET_MS_PROP + " must be >= 1, is " + parkSafetyNetMs);
        }
        if (sparseReserveBytes < -1) {
            throw new IllegalArgumentException(SPARSE_RESERVE_BYTES_PROP + " must be >= 0 or -1, is " + sparseReserveBytes);
        }
    }

    /**
     * The defaults.
     *
     * @return settings with every default
     */
    public static ShmSettings defaults() {
        return new ShmSettings(SPIN_NS_DEFAULT, PEER_CHECK_MS_DEFAULT, PARK_SAFETY_NET_MS_DEFAULT, SPARSE_RESERVE_BYTES_DEFAULT);
    }

    /**
     * The settings the {@code jsdp.soft.*} system properties give, defaults for those unset.
     *
     * @return the settings
     * @throws IllegalArgumentException naming the property and its value when one is malformed or out of range
     */
    public static ShmSettings fromSystemProperties() {
        return new ShmSettings(longProperty(SPIN_NS_PROP, SPIN_NS_DEFAULT),
            longProperty(PEER_CHECK_MS_PROP, PEER_CHECK_MS_DEFAULT),
            longProperty(PARK_SAFETY_NET_MS_PROP, PARK_SAFETY_NET_MS_DEFAULT),
            longProperty(SPARSE_RESERVE_BYTES_PROP, SPARSE_RESERVE_BYTES_DEFAULT));
    }

    static long longProperty(String name, long dflt) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, is '" + v + "'", e);
        }
    }

    /**
     * A copy with another spin window.
     *
     * @param ns the spin window, nanoseconds
     * @return the copy
     */
    public ShmSettings withSpinNs(long ns) {
        return new ShmSettings(ns, peerCheckMs, parkSafetyNetMs, sparseReserveBytes);
    }

    /**
     * A copy with another sweep period.
     *
     * @param ms the period, milliseconds
     * @return the copy
     */
    public ShmSettings withPeerCheckMs(long ms) {
        return new ShmSettings(spinNs, ms, parkSafetyNetMs, sparseReserveBytes);
    }

    /**
     * A copy with another safety net.
     *
     * @param ms the longest park, milliseconds
     * @return the copy
     */
    public ShmSettings withParkSafetyNetMs(long ms) {
        return new ShmSettings(spinNs, peerCheckMs, ms, sparseReserveBytes);
    }

    /**
     * A copy with another reserve for sparse segments.
     *
     * @param bytes the reserve, at least 0, or -1 to write every segment with zeros
     * @return the copy
     */
    public ShmSettings withSparseReserveBytes(long bytes) {
        return new ShmSettings(spinNs, peerCheckMs, parkSafetyNetMs, bytes);
    }

    long parkSafetyNetNs() {
        return TimeUnit.MILLISECONDS.toNanos(parkSafetyNetMs);
    }
}
