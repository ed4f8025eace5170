package io.jsdp.ras;

import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.LoggerFactory;

/**
 * The registry of trace components, their run-time configuration and the JVM-wide flight recorder.
 *
 * <p>Configuration is a specification such as {@code "*:4,cm:5,qp:9"}: entries
 * {@code component:level} separated by commas, {@code *} the level of every component without an
 * entry of its own. A specification replaces the previous one as a whole; without a {@code *}
 * entry the default is {@link TraceLevel#RARE}. It is read from {@link #TRACE_PROP} when this class
 * initializes, where a malformed value fails class initialization with the entry named (a
 * configuration error fails at start-up), and changed at run time by {@link #configure(String)}.
 */
public final class Trace {
    /** System property: the initial trace specification. */
    public static final String TRACE_PROP = "jsdp.trace";
    /** Default of {@link #TRACE_PROP}: every component at {@link TraceLevel#RARE}. */
    public static final String TRACE_DEFAULT = "*:2";
    /**
     * System property, read once at start-up: {@code false} removes tracing as if compiled out — no
     * record reaches the log or the flight recorder whatever {@link #TRACE_PROP} says, and FFDC records
     * have no history. For measuring what tracing costs; not for production.
     */
    public static final String ENABLED_PROP = "jsdp.trace.enabled";
    /** Default of {@link #ENABLED_PROP}. */
    public static final boolean ENABLED_DEFAULT = true;

    private static final String LOGGER_PREFIX = "io.jsdp.";
    private static final FlightRecorder FLIGHT_RECORDER = FlightRecorder.fromSystemProperties();
    private static final ConcurrentHashMap<String, TraceComponent> COMPONENTS = new ConcurrentHashMap<>();
    /**
     * Serializes configuration changes with component creation, so a component created while
     * {@link #configure(String)} runs cannot miss the new configuration.
     */
    private static final Object CONFIG_LOCK = new Object();
    /** The configuration last applied. Written under CONFIG_LOCK; read without it by describe(). */
    private static volatile TraceConfig config = TraceConfig.parse(System.getProperty(TRACE_PROP, TRACE_DEFAULT));

    private Trace() {
    }

    /**
     * Gets or creates the component with this name. A new component takes the level the current
     * configuration gives it. Call once and keep the result in a {@code static final} field.
     *
     * @param name the component name, {@code [a-z0-9._-]+}
     * @return the one component of this name
     * @throws IllegalArgumentException if the name is not valid
     */
    public static TraceComponent component(String name) {
        final TraceComponent existing = COMPONENTS.get(Objects.requireNonNull(name, "name"));
        if (existing != null) {
            return existing;
        }
        if (!TraceConfig.isValidName(name)) {
            throw new IllegalArgumentException(
                TRACE_PROP + ": bad component name '" + name + "' (expected [a-z0-9._-]+)");
        }
        synchronized (CONFIG_LOCK) {
            return COMPONENTS.computeIfAbsent(name, n -> new TraceComponent(
                n, config.levelOf(n), FLIGHT_RECORDER, new Slf4jSink(LoggerFactory.getLogger(LOGGER_PREFIX + n))));
        }
    }

    /**
     * Replaces the configuration at run time, for existing and future components. The whole
     * specification is validated before anything changes.
     *
     * @param spec e.g. {@code "*:4,qp:9"}; blank means every component at the default level 2
     * @throws IllegalArgumentException naming the bad entry; the configuration is then unchanged
     */
    public static void configure(String spec) {
        final TraceConfig parsed = TraceConfig.parse(spec);
        synchronized (CONFIG_LOCK) {
            config = parsed;
            TraceComponent.levels(COMPONENTS.values(), parsed);
        }
    }

    /**
     * Whether tracing is compiled in ({@link #ENABLED_PROP}).
     *
     * @return false when every trace statement is a no-op
     */
    public static boolean enabled() {
        return TraceComponent.COMPILED_IN;
    }

    /**
     * The JVM-wide, always-on ring of records at {@link FlightRecorder#RING_LEVEL} and below.
     *
     * @return the flight recorder
     */
    public static FlightRecorder flightRecorder() {
        return FLIGHT_RECORDER;
    }

    /**
     * The effective configuration: the last specification applied, plus the components whose level
     * was since changed with {@link TraceComponent#level(int)}. Passing it to
     * {@link #configure(String)} reproduces the current levels.
     *
     * @return e.g. {@code "*:2,cm:5"}
     */
    public static String describe() {
        final TraceConfig current = config;
        final SortedMap<String, Integer> effective = new TreeMap<>(current.levels());
        for (TraceComponent component : COMPONENTS.values()) {
            final int level = component.level();
            if (level != current.levelOf(component.name())) {
                effective.put(component.name(), level);
            }
        }
        return TraceConfig.render(current.defaultLevel(), effective);
    }
}
