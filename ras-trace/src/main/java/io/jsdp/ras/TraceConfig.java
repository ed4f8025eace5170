package io.jsdp.ras;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * One parsed, validated {@code jsdp.trace} specification: a default level for {@code *} and
 * explicit levels by component name. Immutable; {@link Trace} swaps whole instances.
 */
final class TraceConfig {
    static final String DEFAULT_KEY = "*";
    /** Level of components when the specification has no {@code *} entry. */
    static final int DEFAULT_LEVEL = TraceLevel.RARE;

    private final int defaultLevel;
    private final SortedMap<String, Integer> levels;

    private TraceConfig(int defaultLevel, SortedMap<String, Integer> levels) {
        this.defaultLevel = defaultLevel;
        this.levels = Collections.unmodifiableSortedMap(levels);
    }

    /**
     * Parses {@code name:level[,name:level]...}; whitespace around entries, names and levels is
     * ignored, a blank specification means all defaults. Validates every entry before returning,
     * so a bad specification never half-applies.
     *
     * @throws IllegalArgumentException naming the first bad or duplicate entry
     */
    static TraceConfig parse(String spec) {
        Objects.requireNonNull(spec, "spec");
        int defaultLevel = DEFAULT_LEVEL;
        boolean sawDefault = false;
        final SortedMap<String, Integer> levels = new TreeMap<>();
        if (spec.isBlank()) {
            return new TraceConfig(defaultLevel, levels);
        }
        for (String raw : spec.split(",", -1)) {
            final String entry = raw.trim();
            final int colon = entry.indexOf(':');
            if (colon < 0) {
                throw badEntry(entry);
            }
            final String name = entry.substring(0, colon).trim();
            final String value = entry.substring(colon + 1).trim();
            if (value.length() != 1 || value.charAt(0) < '0' || value.charAt(0) > '0' + TraceLevel.MAX) {
                throw badEntry(entry);
            }
            final int level = value.charAt(0) - '0';
            if (DEFAULT_KEY.equals(name)) {
                if (sawDefault) {
                    throw duplicateEntry(entry, name);
                }
                sawDefault = true;
                defaultLevel = level;
            } else if (!isValidName(name)) {
                throw badEntry(entry);
            } else if (levels.put(name, level) != null) {
                throw duplicateEntry(entry, name);
            }
        }
        return new TraceConfig(defaultLevel, levels);
    }

    /** Component names: non-empty, {@code [a-z0-9._-]+}, so a name never needs quoting in a spec. */
    static boolean isValidName(String name) {
        if (name == null || name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            final char c = name.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')) {
                return false;
            }
        }
        return true;
    }

    int levelOf(String component) {
        return levels.getOrDefault(component, defaultLevel);
    }

    int defaultLevel() {
        return defaultLevel;
    }

    SortedMap<String, Integer> levels() {
        return levels;
    }

    /** {@code *:d,a:x,b:y}: the default first, then entries by name; parses back to the same config. */
    static String render(int defaultLevel, Map<String, Integer> levels) {
        final StringBuilder out = new StringBuilder().append(DEFAULT_KEY).append(':').append(defaultLevel);
        levels.forEach((name, level) -> out.append(',').append(name).append(':').append(level));
        return out.toString();
    }

    private static IllegalArgumentException badEntry(String entry) {
        return new IllegalArgumentException(Trace.TRACE_PROP + ": bad entry '" + entry
            + "' (expected component:level, component [a-z0-9._-]+ or *, level 0..9)");
    }

    private static IllegalArgumentException duplicateEntry(String entry, String name) {
        return new IllegalArgumentException(Trace.TRACE_PROP + ": duplicate entry '" + entry
            + "' (component '" + name + "' is already set in this specification)");
    }
}
