package io.jsdp.ras;

/**
 * One named trace component ({@code cm}, {@code qp}, {@code device}, ...) with its own level,
 * obtained from {@link Trace#component(String)} and kept in a {@code static final} field:
 *
 * <pre>{@code
 * private static final TraceComponent T = Trace.component("cq");
 * ...
 * if (T.on(TraceLevel.INTERNALS)) T.record(TraceLevel.INTERNALS, "cq.arm", cqn);
 * }</pre>
 *
 * <p>{@link #on(int)} is the one level check: one volatile load and one compare against
 * {@code max(level, FlightRecorder.RING_LEVEL)}, so records at {@link FlightRecorder#RING_LEVEL}
 * and below always pass and reach the ring, which is what gives an error its history.
 * {@code record} checks again which of the two destinations want the record: the ring (level
 * {@code <= RING_LEVEL}, no allocation) and the log (level {@code <=} the configured level;
 * formatting allocates only then). Level 0 is not a record level; such records are ignored.
 */
public final class TraceComponent {
    /**
     * {@link Trace#ENABLED_PROP}, read once when this class initializes. As a {@code static final} it is a
     * constant to the JIT compilers, so with {@code false} every {@code if (T.on(...))} block folds to
     * nothing in compiled code: the same machine code as with the tracing statements deleted from the
     * source, which is what "compiled out" means (issue 10).
     */
    static final boolean COMPILED_IN = !"false".equalsIgnoreCase(System.getProperty(Trace.ENABLED_PROP, "true").trim());

    private final String name;
    private final FlightRecorder ring;
    private final TraceSink sink;

    /** Serializes writers of the pair (level, threshold); readers take no lock. */
    private final Object levelLock = new Object();
    /** Configured level. Written under levelLock by {@link #level(int)}; read by {@code record}. */
    private volatile int level;
    /** {@code max(level, RING_LEVEL)}: the one field {@link #on(int)} reads. Written with level under levelLock. */
    private volatile int threshold;

    TraceComponent(String name, int level, FlightRecorder ring, TraceSink sink) {
        this.name = name;
        this.ring = ring;
        this.sink = sink;
        this.level = TraceLevel.checkLevel(level);
        this.threshold = Math.max(level, FlightRecorder.RING_LEVEL);
    }

    /**
     * The component's name, also the suffix of its slf4j logger {@code io.jsdp.<name>}.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The configured level: records at this level and below are logged.
     *
     * @return 0..9
     */
    public int level() {
        return level;
    }

    /**
     * Changes this component's level at run time; the next {@link Trace#configure(String)}
     * sets it again from the configuration.
     *
     * @param level 0..9
     * @throws IllegalArgumentException if {@code level} is out of range
     */
    public void level(int level) {
        TraceLevel.checkLevel(level);
        synchronized (levelLock) {
            this.level = level;
            this.threshold = Math.max(level, FlightRecorder.RING_LEVEL);
        }
    }

    /**
     * The level check to guard every record with: true if a record at {@code level} goes anywhere.
     *
     * @param level the level of the record about to be made
     * @return whether to build and make the record
     */
    public boolean on(int level) {
        return COMPILED_IN && level <= threshold;
    }

    /**
     * Records an event without data words.
     *
     * @param level trace level of the event
     * @param event constant event name, e.g. {@code "qp.toError"}
     */
    public void record(int level, String event) {
        append(level, event, 0, 0, 0, 0, 0, null);
    }

    /**
     * Records an event with one data word.
     *
     * @param level trace level of the event
     * @param event constant event name
     * @param d1    data word
     */
    public void record(int level, String event, long d1) {
        append(level, event, 1, d1, 0, 0, 0, null);
    }

    /**
     * Records an event with two data words.
     *
     * @param level trace level of the event
     * @param event constant event name
     * @param d1    first data word
     * @param d2    second data word
     */
    public void record(int level, String event, long d1, long d2) {
        append(level, event, 2, d1, d2, 0, 0, null);
    }

    /**
     * Records an event with three data words.
     *
     * @param level trace level of the event
     * @param event constant event name
     * @param d1    first data word
     * @param d2    second data word
     * @param d3    third data word
     */
    public void record(int level, String event, long d1, long d2, long d3) {
        append(level, event, 3, d1, d2, d3, 0, null);
    }

    /**
     * Records an event with four data words.
     *
     * @param level trace level of the event
     * @param event constant event name
     * @param d1    first data word
     * @param d2    second data word
     * @param d3    third data word
     * @param d4    fourth data word
     */
    public void record(int level, String event, long d1, long d2, long d3, long d4) {
        append(level, event, 4, d1, d2, d3, d4, null);
    }

    /**
     * Records an event with the throwable that caused it. The ring keeps the cause's class
     * name only; the log gets the throwable with its stack.
     *
     * @param level trace level of the event, usually {@link TraceLevel#ERROR}
     * @param event constant event name
     * @param cause the cause, or {@code null}
     */
    public void record(int level, String event, Throwable cause) {
        append(level, event, 0, 0, 0, 0, 0, cause);
    }

    /**
     * Records an event whose log line is a sentence rather than data words, such as the one-line
     * start-up report of which device was chosen and why. The ring keeps the event name (not the text:
     * the ring never allocates); the log gets the text. Not for hot paths: the caller builds the text,
     * so guard it with {@link #on(int)}.
     *
     * @param level trace level of the event
     * @param event constant event name
     * @param text the line to log
     */
    public void message(int level, String event, String text) {
        recordWithMessage(level, event, 0, text);
    }

    /**
     * Puts one record into the ring (by its event and {@code d1}) and logs {@code message}
     * instead of the formatted event; for records whose log text is longer than data words,
     * such as the leak report.
     */
    void recordWithMessage(int level, String event, long d1, String message) {
        if (!COMPILED_IN || level < TraceLevel.ERROR) {
            return;
        }
        if (level <= FlightRecorder.RING_LEVEL) {
            ring.append(name, level, event, 1, d1, 0, 0, 0, null);
        }
        if (level <= this.level && sink.isEnabled(level)) {
            sink.emit(level, message, null);
        }
    }

    private void append(
        int level, String event, int words, long d1, long d2, long d3, long d4, Throwable cause) {
        if (!COMPILED_IN || level < TraceLevel.ERROR) {
            return;
        }
        if (level <= FlightRecorder.RING_LEVEL) {
            // Class.getName() caches the name after the first call: no allocation here.
            ring.append(name, level, event, words, d1, d2, d3, d4, cause == null ? null : cause.getClass().getName());
        }
        if (level <= this.level && sink.isEnabled(level)) {
            sink.emit(level, TraceRecord.appendEvent(new StringBuilder(64), event, words, d1, d2, d3, d4).toString(), cause);
        }
    }

    /**
     * The component as a configuration entry.
     *
     * @return {@code name:level}, e.g. {@code cm:5}
     */
    @Override
    public String toString() {
        return name + ':' + level;
    }
}
