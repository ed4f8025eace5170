package io.jsdp.ras;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Resource tracking and leak detection (seed 000): every resource a scope (a device, a
 * connection) creates is recorded with its owner and allocation site; whatever is still open
 * when the scope closes is reported with where it came from. Levels as Netty's
 * {@code ResourceLeakDetector}, set by {@link #LEAK_DETECTION_PROP}:
 *
 * <ul>
 *   <li>{@link Level#OFF}: nothing recorded; {@code track} returns a shared no-op.</li>
 *   <li>{@link Level#SAMPLED} (default): every resource recorded, so {@link #openCount()} is exact;
 *       the allocation stack is captured for one resource in
 *       {@link #LEAK_SAMPLING_INTERVAL_PROP} (the 1st, the 65th, ...), the others report
 *       "allocation site unknown". A single caller frame would name the verbs implementation,
 *       not the code that leaked, so it is not worth capturing.</li>
 *   <li>{@link Level#ALL}: every resource with its full allocation stack.</li>
 * </ul>
 *
 * <p>Tracking happens when a resource is created, not on a data path, so it allocates freely.
 * {@code track} and {@link Tracked#release()} may be called from any thread.
 */
public final class ResourceTracker {
    /** System property: leak detection level, {@code off}, {@code sampled} or {@code all}. */
    public static final String LEAK_DETECTION_PROP = "jsdp.leakDetection";
    /** Default of {@link #LEAK_DETECTION_PROP}. */
    public static final String LEAK_DETECTION_DEFAULT = "sampled";
    /** System property: at level {@code sampled}, capture the stack of one resource in this many. */
    public static final String LEAK_SAMPLING_INTERVAL_PROP = "jsdp.leakDetection.samplingInterval";
    /** Default of {@link #LEAK_SAMPLING_INTERVAL_PROP}. */
    public static final int LEAK_SAMPLING_INTERVAL_DEFAULT = 64;

    /** Deepest allocation stack kept; deeper frames are framework plumbing (runners, executors). */
    static final int MAX_STACK_FRAMES = 128;
    private static final long PID = ProcessHandle.current().pid();
    private static final StackWalker WALKER = StackWalker.getInstance();

    /** How much a tracker records. */
    public enum Level {
        /** Nothing is recorded. */
        OFF,
        /** Every resource is counted; one in the sampling interval gets its allocation stack. */
        SAMPLED,
        /** Every resource is recorded with its allocation stack. */
        ALL;

        /**
         * Parses a level name, ignoring case and surrounding whitespace.
         *
         * @param value {@code off}, {@code sampled} or {@code all}
         * @return the level
         * @throws IllegalArgumentException naming {@link #LEAK_DETECTION_PROP} and the bad value
         */
        public static Level parse(String value) {
            if (value != null) {
                switch (value.trim().toLowerCase(Locale.ROOT)) {
                    case "off":
                        return OFF;
                    case "sampled":
                        return SAMPLED;
                    case "all":
                        return ALL;
                    default:
                        break;
                }
            }
            throw new IllegalArgumentException(
                LEAK_DETECTION_PROP + ": bad value '" + value + "' (expected off, sampled or all)");
        }
    }

    private final String scope;
    private final Level level;
    private final int samplingIntervalResources;
    private final TraceComponent trace;
    private final AtomicLong lastId = new AtomicLong();
    /** Open resources by id; written by track and release on any thread. */
    private final ConcurrentHashMap<Long, LeakRecord> open = new ConcurrentHashMap<>();

    /**
     * A tracker at the configured level and sampling interval.
     *
     * @param scope what owns the resources, e.g. {@code "soft-device#1"}
     * @throws IllegalArgumentException if a leak detection property is malformed
     */
    public ResourceTracker(String scope) {
        this(scope, configuredLevel());
    }

    /**
     * A tracker at the given level and the configured sampling interval.
     *
     * @param scope what owns the resources
     * @param level how much to record
     * @throws IllegalArgumentException if {@link #LEAK_SAMPLING_INTERVAL_PROP} is malformed
     */
    public ResourceTracker(String scope, Level level) {
        this(scope, level, configuredSamplingInterval());
    }

    /**
     * A tracker at the given level and sampling interval.
     *
     * @param scope                     what owns the resources
     * @param level                     how much to record
     * @param samplingIntervalResources at {@link Level#SAMPLED}, capture one stack in this many resources, at least 1
     */
    public ResourceTracker(String scope, Level level, int samplingIntervalResources) {
        this(scope, level, samplingIntervalResources, Trace.component("leak"));
    }

    ResourceTracker(String scope, Level level, int samplingIntervalResources, TraceComponent trace) {
        if (samplingIntervalResources < 1) {
            throw new IllegalArgumentException("sampling interval " + samplingIntervalResources + " < 1");
        }
        this.scope = Objects.requireNonNull(scope, "scope");
        this.level = Objects.requireNonNull(level, "level");
        this.samplingIntervalResources = samplingIntervalResources;
        this.trace = trace;
    }

    /**
     * The level from {@link #LEAK_DETECTION_PROP}, read on every call so that trackers created
     * later see a change; trackers are created rarely.
     *
     * @return the configured level
     * @throws IllegalArgumentException if the property is malformed
     */
    public static Level configuredLevel() {
        return Level.parse(System.getProperty(LEAK_DETECTION_PROP, LEAK_DETECTION_DEFAULT));
    }

    /**
     * The sampling interval from {@link #LEAK_SAMPLING_INTERVAL_PROP}, read on every call.
     *
     * @return the configured interval, at least 1
     * @throws IllegalArgumentException naming the property if it is not an integer of at least 1
     */
    public static int configuredSamplingInterval() {
        final String value = System.getProperty(LEAK_SAMPLING_INTERVAL_PROP);
        if (value == null) {
            return LEAK_SAMPLING_INTERVAL_DEFAULT;
        }
        try {
            final int interval = Integer.parseInt(value.trim());
            if (interval >= 1) {
                return interval;
            }
        } catch (NumberFormatException e) {
            // fall through to the message that names the property
        }
        throw new IllegalArgumentException(
            LEAK_SAMPLING_INTERVAL_PROP + ": bad value '" + value + "' (expected an integer >= 1)");
    }

    /**
     * Records a resource as open. Keeps only the resource's class name, never the resource.
     *
     * @param resource    the resource object, e.g. a queue pair
     * @param kind        short kind: {@code PD}, {@code MR}, {@code CQ}, {@code COMP_CHANNEL}, {@code QP},
     *                    {@code CM_ID}, {@code CM_CHANNEL}, {@code DEVICE_MEMORY}, ...
     * @param description what distinguishes it, e.g. {@code "qp#12 on pd#1"}
     * @return the handle to release the resource with; a shared no-op at level {@link Level#OFF}
     */
    public Tracked track(Object resource, String kind, String description) {
        if (level == Level.OFF) {
            return Tracked.UNTRACKED;
        }
        final Class<?> resourceClass = Objects.requireNonNull(resource, "resource").getClass();
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(description, "description");
        final long id = lastId.incrementAndGet();
        final boolean captureStack = level == Level.ALL || (id - 1) % samplingIntervalResources == 0;
        final Thread thread = Thread.currentThread();
        final String simpleName = resourceClass.getSimpleName();
        open.put(id, new LeakRecord(
            id, kind, description, simpleName.isEmpty() ? resourceClass.getName() : simpleName,
            PID, thread.getName() + '#' + thread.getId(), System.currentTimeMillis(),
            captureStack ? allocationStack() : List.of()));
        return new Tracked(this, id, kind, description);
    }

    void release(long id) {
        open.remove(id);
    }

    LeakRecord record(long id) {
        return open.get(id);
    }

    boolean isOpen(long id) {
        return open.containsKey(id);
    }

    /**
     * Number of resources tracked and not yet released.
     *
     * @return the open count; 0 at level {@link Level#OFF}
     */
    public int openCount() {
        return open.size();
    }

    /**
     * The open resources.
     *
     * @return a new list, oldest first
     */
    public List<LeakRecord> open() {
        final List<LeakRecord> records = new ArrayList<>(open.values());
        records.sort(Comparator.comparingLong(LeakRecord::id));
        return records;
    }

    /**
     * A human-readable report of the open resources: a header line, then each resource with
     * kind, description, owner, age and allocation stack.
     *
     * @return the report; its header says {@code no open resources} when there are none
     */
    public String report() {
        return render(open());
    }

    /**
     * Reports leaks, if any: logs the report at {@link TraceLevel#ERROR} through trace component
     * {@code leak} and puts a {@code leak.detected} record with {@code d1} = count into the ring.
     *
     * @return the report, or {@code ""} when nothing is open
     */
    public String checkLeaks() {
        final List<LeakRecord> leaks = open();
        if (leaks.isEmpty()) {
            return "";
        }
        final String report = render(leaks);
        trace.recordWithMessage(TraceLevel.ERROR, "leak.detected", leaks.size(), report);
        return report;
    }

    /** Forgets every open resource, e.g. when a device force-closes after reporting its leaks. */
    public void releaseAll() {
        open.clear();
    }

    /**
     * The level this tracker records at.
     *
     * @return the level
     */
    public Level level() {
        return level;
    }

    /**
     * What owns the tracked resources.
     *
     * @return the scope given at construction
     */
    public String scope() {
        return scope;
    }

    private String render(List<LeakRecord> leaks) {
        final StringBuilder out = new StringBuilder(256).append("jsdp leak report for ").append(scope).append(": ");
        if (leaks.isEmpty()) {
            return out.append("no open resources").toString();
        }
        out.append(leaks.size()).append(" resource(s) still open");
        final long nowEpochMillis = System.currentTimeMillis();
        for (LeakRecord leak : leaks) {
            out.append("\n  ").append(leak.render(nowEpochMillis));
        }
        return out.toString();
    }

    /** The caller's stack, starting at the frame that called {@link #track}. */
    private static List<StackTraceElement> allocationStack() {
        final String self = ResourceTracker.class.getName();
        return WALKER.walk(frames -> frames
            .dropWhile(frame -> frame.getClassName().equals(self))
            .limit(MAX_STACK_FRAMES)
            .map(StackWalker.StackFrame::toStackTraceElement)
            .toList());
    }

    /**
     * For logs.
     *
     * @return scope, level and open count
     */
    @Override
    public String toString() {
        return "ResourceTracker[" + scope + ", " + level + ", open=" + open.size() + ']';
    }
}
