package io.jsdp.ras;

import java.util.List;
import java.util.Objects;

/**
 * What a {@link ResourceTracker} knows about one open resource. Holds no reference to the
 * resource itself.
 *
 * @param id                 tracker-local id, in creation order
 * @param kind               resource kind, e.g. {@code "QP"}, {@code "MR"}, {@code "CM_ID"}
 * @param description        free text given at creation, e.g. {@code "qp#12 on pd#1"}
 * @param resourceClass      simple class name of the resource object
 * @param ownerPid           process that created it
 * @param ownerThread        {@code name#id} of the thread that created it
 * @param createdEpochMillis creation time, {@link System#currentTimeMillis()}
 * @param allocationSite     stack at creation, innermost frame first, starting at the caller of
 *                           {@code track}; empty when the stack was not captured (sampled out)
 */
public record LeakRecord(
    long id,
    String kind,
    String description,
    String resourceClass,
    long ownerPid,
    String ownerThread,
    long createdEpochMillis,
    List<StackTraceElement> allocationSite) {

    /** Shown instead of a stack for resources whose stack was not captured. */
    static final String SAMPLED_OUT =
        "allocation site unknown (sampled out; set -D" + ResourceTracker.LEAK_DETECTION_PROP + "=all)";

    /**
     * Copies {@code allocationSite} so the record is immutable.
     *
     * @param id                 tracker-local id
     * @param kind               resource kind
     * @param description        description
     * @param resourceClass      simple class name of the resource
     * @param ownerPid           creating process
     * @param ownerThread        creating thread, {@code name#id}
     * @param createdEpochMillis creation time
     * @param allocationSite     stack at creation, possibly empty
     */
    public LeakRecord {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(resourceClass, "resourceClass");
        Objects.requireNonNull(ownerThread, "ownerThread");
        allocationSite = List.copyOf(allocationSite);
    }

    /**
     * Renders the record with its age now; see {@link #render(long)}.
     *
     * @return the rendered record, several lines
     */
    public String render() {
        return render(System.currentTimeMillis());
    }

    /**
     * Renders the record: one line with id, kind, description, class, owner and age, then one
     * {@code \tat ...} line per allocation frame, as in a stack trace.
     *
     * @param nowEpochMillis the time the age is measured to
     * @return the rendered record, lines separated by {@code '\n'}, no trailing newline
     */
    public String render(long nowEpochMillis) {
        final StringBuilder out = new StringBuilder(128 + 64 * allocationSite.size());
        out.append('#').append(id).append(' ').append(kind).append(" '").append(description).append("' (")
            .append(resourceClass).append(") owner pid ").append(ownerPid).append(" thread ").append(ownerThread)
            .append(", age ").append(Math.max(0, nowEpochMillis - createdEpochMillis)).append(" ms");
        if (allocationSite.isEmpty()) {
            out.append("\n\t").append(SAMPLED_OUT);
        }
        for (StackTraceElement frame : allocationSite) {
            out.append("\n\tat ").append(frame);
        }
        return out.toString();
    }
}
