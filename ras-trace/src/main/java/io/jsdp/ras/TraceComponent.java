package io.jsdp.ras;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MutableCallSite;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;

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
 * <p>{@link #on(int)} is the one level check. Records at {@link FlightRecorder#RING_LEVEL} and below
 * always pass and reach the ring, which is what gives an error its history. Above it, a record first
 * meets the JVM-wide <em>ceiling</em> — the highest level any component is set to — which compiled code
 * sees as a constant, and only below the ceiling the component's own {@code max(level, RING_LEVEL)}
 * (one volatile load). At the default levels the ceiling is {@code RING_LEVEL}, so a hot-path guard
 * such as {@code on(HOT_INTERNALS)} folds to {@code false} and its block disappears from compiled code,
 * as with {@link Trace#ENABLED_PROP}{@code =false} (issue 10); raising any component's level changes the
 * ceiling, which deoptimizes the methods that folded it, and they recompile with the guard in.
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

    /**
     * The ceiling: the highest {@code threshold} of all live components, as a constant {@code int} method
     * handle. A {@code static final} {@link MutableCallSite}'s dynamic invoker is what HotSpot's compilers
     * inline down to the target's constant, recording a dependency on the call site: {@code setTarget}
     * deoptimizes every compiled method that folded the old value. Changed only under {@link #LEVELS_LOCK}.
     */
    private static final MutableCallSite CEILING_SITE = new MutableCallSite(ceilingTarget(FlightRecorder.RING_LEVEL));
    private static final MethodHandle CEILING = CEILING_SITE.dynamicInvoker();
    /** Guards {@link #ALL}, {@link #ceiling} and every component's (level, threshold) pair. */
    private static final Object LEVELS_LOCK = new Object();
    /** Every component not yet collected (tests make their own), for recomputing the ceiling. */
    private static final Set<TraceComponent> ALL = Collections.newSetFromMap(new WeakHashMap<>());
    /** The value {@link #CEILING_SITE} returns; guarded by LEVELS_LOCK. */
    private static int ceiling = FlightRecorder.RING_LEVEL;

    private final String name;
    private final FlightRecorder ring;
    private final TraceSink sink;

    /** Configured level. Written under LEVELS_LOCK by {@link #level(int)}; read by {@code record}. */
    private volatile int level;
    /** {@code max(level, RING_LEVEL)}: the field {@link #on(int)} reads below the ceiling. Written with level under LEVELS_LOCK. */
    private volatile int threshold;

    TraceComponent(String name, int level, FlightRecorder ring, TraceSink sink) {
        this.name = name;
        this.ring = ring;
        this.sink = sink;
        TraceLevel.checkLevel(level);
        synchronized (LEVELS_LOCK) {
            this.level = level;
            this.threshold = Math.max(level, FlightRecorder.RING_LEVEL);
            ALL.add(this);
            updateCeilingLocked();
        }
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
        synchronized (LEVELS_LOCK) {
            this.level = level;
            this.threshold = Math.max(level, FlightRecorder.RING_LEVEL);
            updateCeilingLocked();
        }
    }

    /** Sets the level of each component from {@code config}, moving the ceiling once for all of them. */
    static void levels(Iterable<TraceComponent> components, TraceConfig config) {
        synchronized (LEVELS_LOCK) {
            for (TraceComponent c : components) {
                final int l = config.levelOf(c.name);
                c.level = l;
                c.threshold = Math.max(l, FlightRecorder.RING_LEVEL);
            }
            updateCeilingLocked();
        }
    }

    /**
     * The level check to guard every record with: true if a record at {@code level} goes anywhere.
     * With {@code level} a constant, as at every call site, compiled code keeps this check only when
     * some component of the JVM is set to {@code level} or above (see the class comment).
     *
     * @param level the level of the record about to be made
     * @return whether to build and make the record
     */
    public boolean on(int level) {
        // threshold >= RING_LEVEL always. Kept under 35 bytecodes, C1's inlining limit (MaxInlineSize).
        return COMPILED_IN && (level <= FlightRecorder.RING_LEVEL || level <= ceiling() && level <= threshold);
    }

    /** The ceiling as the compiled code sees it: a constant, until {@link #updateCeilingLocked()} changes it. */
    static int ceiling() {
        try {
            return (int) CEILING.invokeExact();
        } catch (Throwable impossible) { // a constant method handle throws nothing
            return TraceLevel.MAX;
        }
    }

    /**
     * Sets the ceiling to the highest threshold of all components, if it changed. A raised threshold is
     * written before the ceiling rises and a lowered one before the ceiling falls, so a reader may miss
     * records for a moment around a change but never checks against a stale ceiling for long:
     * {@code syncAll} publishes the new target to every thread.
     */
    private static void updateCeilingLocked() {
        int max = FlightRecorder.RING_LEVEL;
        for (TraceComponent c : ALL) {
            max = Math.max(max, c.threshold);
        }
        if (max != ceiling) {
            ceiling = max;
            CEILING_SITE.setTarget(ceilingTarget(max));
            MutableCallSite.syncAll(new MutableCallSite[] {CEILING_SITE});
        }
    }

    private static MethodHandle ceilingTarget(int value) {
        return MethodHandles.constant(int.class, value);
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
     * The first half of {@link #message}: puts the record into the ring, logs nothing ({@link #emit} does,
     * later, on a thread that may block on the log's I/O).
     */
    void ringOnly(int level, String event) {
        if (COMPILED_IN && level >= TraceLevel.ERROR && level <= FlightRecorder.RING_LEVEL) {
            ring.append(name, level, event, 1, 0, 0, 0, 0, null);
        }
    }

    /** The second half of {@link #message}: logs {@code text} when the level is on, puts nothing in the ring. */
    void emit(int level, String text) {
        if (COMPILED_IN && level >= TraceLevel.ERROR && level <= this.level && sink.isEnabled(level)) {
            sink.emit(level, text, null);
        }
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
