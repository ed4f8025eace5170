package io.jsdp.zcopy;

import java.util.concurrent.TimeUnit;

/**
 * Stack-wide zero-copy settings ({@code jsdp.zcopy.*}, {@code docs/configuration.md}). The per-connection
 * threshold is {@link io.jsdp.flow.engine.SdpOptions#zcopyThreshold()}.
 *
 * @param srcAvailTimeoutNs how long a source waits for the sink to start on an advertisement before it
 *     sends SrcAvailCancel (OFED {@code SDP_SRCAVAIL_ADV_TIMEOUT}, 1 s)
 * @param cancelTimeoutNs how long a source waits for the answer to SrcAvailCancel before it resets the
 *     connection (OFED {@code SDP_SRCAVAIL_CANCEL_TIMEOUT}, 60 s)
 * @param readTimeoutNs how long a sink waits for its RDMA READ (OFED {@code SDP_RDMA_READ_TIMEOUT}, 60 s)
 * @param registrationBudgetBytes registered bytes the cache keeps when idle (most recently used first)
 * @param inlineBytes the first bytes of an advertised buffer that travel inline in the SrcAvail
 * @param spinMaxNs how long, at most, a blocked zero-copy writer polls beyond the engine's spin window
 *     ({@code jsdp.spinNs}) while its transfers are expected to end, judged by how long recent ones took;
 *     0 parks after the spin window as every other wait does, and so does a spin window of 0
 */
public record ZeroCopySettings(long srcAvailTimeoutNs, long cancelTimeoutNs, long readTimeoutNs,
                               long registrationBudgetBytes, int inlineBytes, long spinMaxNs) {
    /** Property: {@link #srcAvailTimeoutNs} in milliseconds. */
    public static final String SRC_AVAIL_TIMEOUT_MS_PROP = "jsdp.zcopy.srcAvailTimeoutMs";
    /** Default of {@link #SRC_AVAIL_TIMEOUT_MS_PROP}. */
    public static final long SRC_AVAIL_TIMEOUT_MS_DEFAULT = 1_000;
    /** Property: {@link #cancelTimeoutNs} in milliseconds. */
    public static final String CANCEL_TIMEOUT_MS_PROP = "jsdp.zcopy.cancelTimeoutMs";
    /** Default of {@link #CANCEL_TIMEOUT_MS_PROP}. */
    public static final long CANCEL_TIMEOUT_MS_DEFAULT = 60_000;
    /** Property: {@link #readTimeoutNs} in milliseconds. */
    public static final String READ_TIMEOUT_MS_PROP = "jsdp.zcopy.readTimeoutMs";
    /** Default of {@link #READ_TIMEOUT_MS_PROP}. */
    public static final long READ_TIMEOUT_MS_DEFAULT = 60_000;
    /** Property: {@link #registrationBudgetBytes}. */
    public static final String REGISTRATION_BUDGET_PROP = "jsdp.zcopy.registrationBudgetBytes";
    /** Default of {@link #REGISTRATION_BUDGET_PROP}: 64 MiB. */
    public static final long REGISTRATION_BUDGET_DEFAULT = 64L << 20;
    /** Property: {@link #inlineBytes}. */
    public static final String INLINE_BYTES_PROP = "jsdp.zcopy.inlineBytes";
    /** Default of {@link #INLINE_BYTES_PROP}: one page, as OFED's combined mode. */
    public static final int INLINE_BYTES_DEFAULT = 4096;
    /** Property: {@link #spinMaxNs}. */
    public static final String SPIN_MAX_NS_PROP = "jsdp.zcopy.spinMaxNs";
    /** Default of {@link #SPIN_MAX_NS_PROP}: 1 ms (a 1 MiB transfer takes some 50 µs on a fast machine). */
    public static final long SPIN_MAX_NS_DEFAULT = 1_000_000;

    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException when a time is not positive or a size negative
     */
    public ZeroCopySettings {
        if (srcAvailTimeoutNs <= 0 || cancelTimeoutNs <= 0 || readTimeoutNs <= 0) {
            throw new IllegalArgumentException("zero-copy timeouts must be positive");
        }
        if (registrationBudgetBytes < 0 || inlineBytes < 0 || spinMaxNs < 0) {
            throw new IllegalArgumentException("registrationBudgetBytes, inlineBytes and spinMaxNs must not be negative");
        }
    }

    /**
     * The settings from the system properties (defaults where unset).
     *
     * @return the settings
     * @throws IllegalArgumentException naming the property when a value is malformed or out of range
     */
    public static ZeroCopySettings fromSystemProperties() {
        return new ZeroCopySettings(
            TimeUnit.MILLISECONDS.toNanos(prop(SRC_AVAIL_TIMEOUT_MS_PROP, SRC_AVAIL_TIMEOUT_MS_DEFAULT, 1, 3_600_000)),
            TimeUnit.MILLISECONDS.toNanos(prop(CANCEL_TIMEOUT_MS_PROP, CANCEL_TIMEOUT_MS_DEFAULT, 1, 3_600_000)),
            TimeUnit.MILLISECONDS.toNanos(prop(READ_TIMEOUT_MS_PROP, READ_TIMEOUT_MS_DEFAULT, 1, 3_600_000)),
            prop(REGISTRATION_BUDGET_PROP, REGISTRATION_BUDGET_DEFAULT, 0, Long.MAX_VALUE),
            (int) prop(INLINE_BYTES_PROP, INLINE_BYTES_DEFAULT, 0, 1 << 20),
            prop(SPIN_MAX_NS_PROP, SPIN_MAX_NS_DEFAULT, 0, 10_000_000_000L));
    }

    /**
     * A copy with other timeouts (tests).
     *
     * @param srcAvailMs {@link #srcAvailTimeoutNs} in ms
     * @param cancelMs {@link #cancelTimeoutNs} in ms
     * @param readMs {@link #readTimeoutNs} in ms
     * @return the copy
     */
    public ZeroCopySettings withTimeoutsMs(long srcAvailMs, long cancelMs, long readMs) {
        return new ZeroCopySettings(TimeUnit.MILLISECONDS.toNanos(srcAvailMs), TimeUnit.MILLISECONDS.toNanos(cancelMs),
            TimeUnit.MILLISECONDS.toNanos(readMs), registrationBudgetBytes, inlineBytes, spinMaxNs);
    }

    /**
     * A copy with another registration budget.
     *
     * @param bytes the budget
     * @return the copy
     */
    public ZeroCopySettings withRegistrationBudget(long bytes) {
        return new ZeroCopySettings(srcAvailTimeoutNs, cancelTimeoutNs, readTimeoutNs, bytes, inlineBytes, spinMaxNs);
    }

    private static long prop(String name, long def, long min, long max) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return def;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": expected an integer " + min + " … " + max + ", got '" + v + "'", e);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(name + ": " + n + " is outside " + min + " … " + max);
        }
        return n;
    }
}
