package io.jsdp.ras;

/**
 * Where a component's enabled records are written besides the ring: slf4j in production
 * ({@link Slf4jSink}), a capturing sink in tests. Called only when the record's level is within
 * the component's configured level, so implementations may allocate.
 */
interface TraceSink {
    /** Whether the back end would keep a record at {@code level}; checked before formatting. */
    boolean isEnabled(int level);

    /** Writes one formatted record; {@code cause} may be {@code null}. */
    void emit(int level, String message, Throwable cause);
}
