package io.jsdp.ras;

/**
 * The trace levels of seed 000. A component traces every record whose level is at most the
 * component's configured level; higher numbers are more detailed and more frequent.
 *
 * <p>Levels 3 and 6 have no name: they are left free as in the seed, so a component can slot a
 * level between two named ones without renumbering. They are valid configuration values.
 */
public final class TraceLevel {
    /** As a component level: nothing reaches the log; records at {@link #RARE} and below still reach the ring. */
    public static final int OFF = 0;
    /** Errors: something failed and a connection, resource or request is affected. */
    public static final int ERROR = 1;
    /** Rare events: connection set-up and tear-down, state changes, configuration. */
    public static final int RARE = 2;
    /** Entry to and exit from API functions (not on the per-byte or per-completion path). */
    public static final int ENTRY_EXIT = 4;
    /** Decisions and state inside API functions. */
    public static final int INTERNALS = 5;
    /** Entry to and exit from hot-path functions (post, poll, per-message engine steps). */
    public static final int HOT_ENTRY_EXIT = 7;
    /** Decisions and state inside hot-path functions. */
    public static final int HOT_INTERNALS = 8;
    /** Data dumps: headers, payload excerpts. */
    public static final int DATA = 9;

    /** Highest valid level, used when validating configuration. */
    static final int MAX = DATA;

    private TraceLevel() {
    }

    /**
     * Name of a level for rendering.
     *
     * @param level any int
     * @return the constant's name, e.g. {@code "RARE"}, or {@code "LEVEL_3"} for a level without a name
     */
    public static String name(int level) {
        return switch (level) {
            case OFF -> "OFF";
            case ERROR -> "ERROR";
            case RARE -> "RARE";
            case ENTRY_EXIT -> "ENTRY_EXIT";
            case INTERNALS -> "INTERNALS";
            case HOT_ENTRY_EXIT -> "HOT_ENTRY_EXIT";
            case HOT_INTERNALS -> "HOT_INTERNALS";
            case DATA -> "DATA";
            default -> "LEVEL_" + level;
        };
    }

    static int checkLevel(int level) {
        if (level < OFF || level > MAX) {
            throw new IllegalArgumentException("trace level " + level + " out of range 0..9");
        }
        return level;
    }
}
