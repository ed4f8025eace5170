package io.jsdp.ras;

import java.lang.ref.Cleaner;
import java.security.ProtectionDomain;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Leak detection for objects the application must close (channels, sockets): an object that becomes
 * garbage while still open is closed by a {@link Cleaner} action, which releases what the object held
 * (queue pair, completion queue, memory regions, the engine connection, a TCP delegate) and reports the
 * leak with where the object was opened: a log line at {@link TraceLevel#ERROR} through trace
 * component {@code leak}, a {@code leak.<kind>} record in the flight recorder and an FFDC record.
 *
 * <p>The owner registers with {@link #guard} and keeps the {@link Guard}; its own {@code close} calls
 * {@link Guard#close()}. The {@link Cleanup} must not refer to the owner (not even through a lambda
 * or an inner class): the cleaner holds it, so such a reference would keep the owner reachable and it
 * would never be cleaned. It holds what the owner would release instead.
 *
 * <p>What is recorded depends on {@link ResourceTracker#LEAK_DETECTION_PROP}:
 * <ul>
 *   <li>{@code off}: the cleaner still closes a leaked object (releasing device resources is not a
 *       diagnostic), the report says where it was opened is unknown;</li>
 *   <li>{@code sampled} (default): every object gets its <em>opener</em>, the first stack frame that is
 *       neither JDK nor jsdp code (found by a short stack walk that stops there), and one object in
 *       {@link ResourceTracker#LEAK_SAMPLING_INTERVAL_PROP} its whole creation stack;</li>
 *   <li>{@code all}: every object its whole creation stack.</li>
 * </ul>
 */
public final class LeakDetector {
    private static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "jsdp-leak-cleaner");
        t.setDaemon(true);
        return t;
    });
    private static final StackWalker CLASS_WALKER = StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE);
    private static final ClassLoader PLATFORM = ClassLoader.getPlatformClassLoader();

    private final ResourceTracker tracker;
    private final TraceComponent trace;
    /** Code sources whose frames are not the opener: jsdp's own jars or class directories. */
    private final Set<ProtectionDomain> internal = new HashSet<>();
    private final AtomicLong leaks = new AtomicLong();
    /** Whether a class's frames are skipped when looking for the opener; computed once per class. */
    private final ClassValue<Boolean> internalClass = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> c) {
            ClassLoader loader = c.getClassLoader();
            return loader == null || loader == PLATFORM || internal.contains(c.getProtectionDomain());
        }
    };

    /**
     * A detector at the configured level.
     *
     * @param scope what it guards, e.g. {@code "sdp-provider channels"}
     * @param internalClasses a class from each code source whose frames are jsdp's, not the application's
     * @throws IllegalArgumentException if a leak detection property is malformed
     */
    public LeakDetector(String scope, Class<?>... internalClasses) {
        this(new ResourceTracker(scope), internalClasses);
    }

    /**
     * A detector over a given tracker.
     *
     * @param tracker records the open objects (its level applies)
     * @param internalClasses a class from each code source whose frames are jsdp's
     */
    public LeakDetector(ResourceTracker tracker, Class<?>... internalClasses) {
        this.tracker = Objects.requireNonNull(tracker, "tracker");
        this.trace = Trace.component("leak");
        internal.add(LeakDetector.class.getProtectionDomain());
        for (Class<?> c : internalClasses) {
            internal.add(c.getProtectionDomain());
        }
    }

    /** Releases what a leaked object held; runs on the cleaner's thread. */
    @FunctionalInterface
    public interface Cleanup {
        /**
         * Releases the resources.
         *
         * @return what was released, for the report, e.g. {@code "SDP connection 7 closed"}
         */
        String release();
    }

    /**
     * Watches {@code owner}: if it becomes garbage before {@link Guard#close()}, {@code cleanup} runs
     * and the leak is reported. Call where the object is opened: the creation stack is taken here.
     *
     * @param owner the object the application must close
     * @param kind short kind for the report and the FFDC kind {@code leak.<kind>}, e.g. {@code "CHANNEL"}
     * @param description what it is, e.g. its class; {@link Guard#describe} changes it later
     * @param cleanup releases what the owner holds; must not refer to {@code owner}
     * @return the guard the owner keeps
     */
    public Guard guard(Object owner, String kind, String description, Cleanup cleanup) {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(cleanup, "cleanup");
        Tracked tracked = tracker.track(owner, kind, description);
        String opener = tracker.level() == ResourceTracker.Level.OFF ? null : opener();
        State state = new State(this, tracked, kind, owner.getClass().getName(), description, opener, cleanup);
        return new Guard(state, CLEANER.register(owner, state));
    }

    /** The first frame of the caller's stack that is neither JDK nor jsdp code. */
    private String opener() {
        return CLASS_WALKER.walk(frames -> frames.filter(f -> !isInternal(f.getDeclaringClass())).findFirst()
            .map(f -> f.toStackTraceElement().toString()).orElse("unknown (only JDK and jsdp frames)"));
    }

    private boolean isInternal(Class<?> c) {
        return internalClass.get(c);
    }

    /**
     * Objects garbage-collected while open, so far: counted once cleaned up and reported.
     *
     * @return the count
     */
    public long leaksDetected() {
        return leaks.get();
    }

    /**
     * The tracker: {@link ResourceTracker#openCount()} is the number of guarded objects still open.
     *
     * @return the tracker
     */
    public ResourceTracker tracker() {
        return tracker;
    }

    private void report(State s) {
        LeakRecord record = s.tracked.record();
        String released;
        try {
            released = s.cleanup.release();
        } catch (RuntimeException e) {
            released = "release failed: " + e;
            trace.record(TraceLevel.ERROR, "leak.releaseFailed", e);
        }
        s.tracked.release();
        String opener = s.opener != null ? s.opener
            : "unknown (-D" + ResourceTracker.LEAK_DETECTION_PROP + "=off; set sampled or all)";
        String summary = s.ownerClass + " (" + s.description + ") was garbage-collected while open; opened at "
            + opener;
        StringBuilder text = new StringBuilder(512).append("jsdp LEAK: ").append(summary).append('\n')
            .append("closed by the cleaner: ").append(released).append('\n')
            .append("the application must close it; when it was opened:\n");
        if (record != null) {
            text.append("  ").append(record.render());
        } else {
            text.append("  not recorded (-D").append(ResourceTracker.LEAK_DETECTION_PROP).append("=off)");
        }
        String report = text.toString();
        trace.recordWithMessage(TraceLevel.ERROR, "leak." + s.kind, s.tracked.id(), report);
        Ffdc.capture("leak", "leak." + s.kind, summary, report);
        leaks.incrementAndGet(); // last: who sees the count sees the report
    }

    /** What the cleaner holds for one object: everything but the object. */
    private static final class State implements Runnable {
        final LeakDetector detector;
        final Tracked tracked;
        final String kind;
        final String ownerClass;
        final String opener;
        final Cleanup cleanup;
        volatile String description;
        /** Set by {@link Guard#close()} before it runs this action: a close, not a leak. */
        volatile boolean closed;

        State(LeakDetector detector, Tracked tracked, String kind, String ownerClass, String description, String opener,
              Cleanup cleanup) {
            this.detector = detector;
            this.tracked = tracked;
            this.kind = kind;
            this.ownerClass = ownerClass;
            this.description = description;
            this.opener = opener;
            this.cleanup = cleanup;
        }

        @Override
        public void run() {
            if (closed) {
                tracked.release();
            } else {
                detector.report(this);
            }
        }
    }

    /** An owner's registration; see {@link LeakDetector#guard}. */
    public static final class Guard {
        private final State state;
        private final Cleaner.Cleanable cleanable;

        Guard(State state, Cleaner.Cleanable cleanable) {
            this.state = state;
            this.cleanable = cleanable;
        }

        /**
         * Updates the description the report shows, e.g. once the remote address is known.
         *
         * @param description the new description
         */
        public void describe(String description) {
            state.description = Objects.requireNonNull(description, "description");
        }

        /** The owner was closed: no leak. Idempotent; the owner releases its resources itself. */
        public void close() {
            state.closed = true;
            cleanable.clean();
        }

        /**
         * Where the owner was opened: its first application frame.
         *
         * @return the frame, or null at level {@code off}
         */
        public String opener() {
            return state.opener;
        }
    }
}
