package io.jsdp.ras;

/**
 * A resource's entry in its {@link ResourceTracker}, returned by
 * {@link ResourceTracker#track(Object, String, String)}. The resource keeps it and calls
 * {@link #release()} when it is closed or destroyed. It refers to the tracker, never the reverse,
 * so a tracked resource stays collectable.
 */
public final class Tracked {
    /** Shared by every resource of a tracker at {@link ResourceTracker.Level#OFF}. */
    static final Tracked UNTRACKED = new Tracked(null, 0, "", "");

    private final ResourceTracker tracker;
    private final long id;
    private final String kind;
    private final String description;

    Tracked(ResourceTracker tracker, long id, String kind, String description) {
        this.tracker = tracker;
        this.id = id;
        this.kind = kind;
        this.description = description;
    }

    /**
     * Marks the resource released: it no longer counts as open. Idempotent and thread-safe.
     */
    public void release() {
        if (tracker != null) {
            tracker.release(id);
        }
    }

    /** The id in the tracker; 0 for an untracked resource. */
    long id() {
        return id;
    }

    /** The tracker's record of the resource, or null once released or when untracked. */
    LeakRecord record() {
        return tracker == null ? null : tracker.record(id);
    }

    /**
     * Whether the resource still counts as open in its tracker.
     *
     * @return false after {@link #release()}, after {@link ResourceTracker#releaseAll()}, and
     *     always for an untracked resource
     */
    public boolean isOpen() {
        return tracker != null && tracker.isOpen(id);
    }

    /**
     * The resource kind given to {@code track}, e.g. {@code "QP"}.
     *
     * @return the kind; empty for an untracked resource (tracker level {@code OFF})
     */
    public String kind() {
        return kind;
    }

    /**
     * The description given to {@code track}.
     *
     * @return the description; empty for an untracked resource (tracker level {@code OFF})
     */
    public String description() {
        return description;
    }

    /**
     * For logs.
     *
     * @return kind, description and id, or {@code "untracked"}
     */
    @Override
    public String toString() {
        return tracker == null ? "untracked" : kind + " '" + description + "' #" + id;
    }
}
