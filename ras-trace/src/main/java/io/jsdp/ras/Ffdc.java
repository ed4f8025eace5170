package io.jsdp.ras;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * First-failure data capture (seed 000): when a connection is aborted, a device fails or a peer
 * breaks the protocol, the code that sees it calls {@link #capture} once with a snapshot of the
 * failing object. The record keeps the snapshot and the flight recorder's recent history, so the
 * first failure can be explained without reproducing it.
 *
 * <p>Records are kept in memory (the last {@link #KEEP_DEFAULT}, for {@link #recent()}) and, when
 * {@link #DIR_PROP} names a directory, written there as one text file each: per JVM at most
 * {@link #MAX_FILES_PROP} files, each cut at {@link #MAX_RECORD_BYTES_PROP} bytes, and at most
 * {@link #MAX_TOTAL_BYTES_PROP} bytes in all, so a storm of failures cannot fill a disk. Capture never
 * throws: a failure to write is counted and traced, never raised into the failing code path.
 */
public final class Ffdc {
    /** System property: directory FFDC records are written to; empty keeps them in memory only. */
    public static final String DIR_PROP = "jsdp.ffdc.dir";
    /** Default of {@link #DIR_PROP}: no files. */
    public static final String DIR_DEFAULT = "";
    /** System property: the most record files this JVM writes. */
    public static final String MAX_FILES_PROP = "jsdp.ffdc.maxFiles";
    /** Default of {@link #MAX_FILES_PROP}. */
    public static final int MAX_FILES_DEFAULT = 100;
    /** System property: the largest record file in bytes; a longer record is cut and says so. */
    public static final String MAX_RECORD_BYTES_PROP = "jsdp.ffdc.maxRecordBytes";
    /** Default of {@link #MAX_RECORD_BYTES_PROP}. */
    public static final int MAX_RECORD_BYTES_DEFAULT = 64 * 1024;
    /** System property: the most bytes of record files this JVM writes in all. */
    public static final String MAX_TOTAL_BYTES_PROP = "jsdp.ffdc.maxTotalBytes";
    /** Default of {@link #MAX_TOTAL_BYTES_PROP}: 8 MiB. */
    public static final long MAX_TOTAL_BYTES_DEFAULT = 8L * 1024 * 1024;
    /** Records kept in memory. */
    public static final int KEEP_DEFAULT = 256;
    /** The largest snapshot text kept in a record, in chars; a longer snapshot is cut and says so. */
    public static final int MAX_RECORD_BYTES = 64 * 1024;
    /** History records from the flight recorder copied into each record. */
    public static final int HISTORY_RECORDS = 64;

    private static final TraceComponent TRACE = Trace.component("ffdc");
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final AtomicLong WRITE_FAILURES = new AtomicLong();
    /** Guarded by itself. */
    private static final ArrayDeque<FfdcRecord> RECENT = new ArrayDeque<>();
    private static final FfdcFiles FILES = new FfdcFiles(System.getProperty(DIR_PROP, DIR_DEFAULT).trim(),
        parseMaxFiles(System.getProperty(MAX_FILES_PROP)),
        (int) parseBytes(MAX_RECORD_BYTES_PROP, MAX_RECORD_BYTES_DEFAULT, 1024, Integer.MAX_VALUE),
        parseBytes(MAX_TOTAL_BYTES_PROP, MAX_TOTAL_BYTES_DEFAULT, 0, Long.MAX_VALUE));

    private Ffdc() {
    }

    private static int parseMaxFiles(String value) {
        if (value == null || value.isBlank()) {
            return MAX_FILES_DEFAULT;
        }
        try {
            int n = Integer.parseInt(value.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException(MAX_FILES_PROP + ": expected an integer >= 0, got '" + value + "'");
    }

    private static long parseBytes(String prop, long dflt, long min, long max) {
        String value = System.getProperty(prop);
        if (value == null || value.isBlank()) {
            return dflt;
        }
        try {
            long n = Long.parseLong(value.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // fall through to the error below
        }
        throw new IllegalArgumentException(prop + ": expected an integer " + min + ".." + max + ", got '" + value + "'");
    }

    /**
     * Captures one failure, logged at {@link TraceLevel#ERROR}. Cheap enough for every abort, but not for
     * hot paths.
     *
     * @param component the reporting component, e.g. {@code "sdp"}
     * @param kind a constant naming the failure, e.g. {@code "protocol.MSEQ_OUT_OF_ORDER"}
     * @param summary one line: what failed, where
     * @param snapshot the failing object's state, several lines
     * @return the record
     */
    public static FfdcRecord capture(String component, String kind, String summary, String snapshot) {
        return capture(TraceLevel.ERROR, component, kind, summary, snapshot);
    }

    /**
     * Captures one failure whose log line has {@code level}: the record (kept, and written to a file)
     * is the same at every level; {@link TraceLevel#RARE} is for a failure the application does not see
     * as one (a peer process that died after reading everything: an orderly end of the stream here).
     *
     * @param level the log line's level, {@link TraceLevel#ERROR} or {@link TraceLevel#RARE}
     * @param component the reporting component, e.g. {@code "sdp"}
     * @param kind a constant naming the failure
     * @param summary one line: what failed, where
     * @param snapshot the failing object's state, several lines
     * @return the record
     */
    public static FfdcRecord capture(int level, String component, String kind, String summary, String snapshot) {
        List<String> history = new ArrayList<>();
        long origin = System.nanoTime();
        List<TraceRecord> recent = Trace.flightRecorder().snapshot();
        for (int i = Math.max(0, recent.size() - HISTORY_RECORDS); i < recent.size(); i++) {
            history.add(recent.get(i).render(origin));
        }
        String text = snapshot == null ? "" : snapshot;
        if (text.length() > MAX_RECORD_BYTES) {
            text = text.substring(0, MAX_RECORD_BYTES) + "\n... (cut at " + MAX_RECORD_BYTES + " chars)";
        }
        FfdcRecord record = new FfdcRecord(SEQUENCE.incrementAndGet(), System.currentTimeMillis(), component, kind,
            summary, text, List.copyOf(history));
        synchronized (RECENT) {
            if (RECENT.size() == KEEP_DEFAULT) {
                RECENT.removeFirst();
            }
            RECENT.addLast(record);
        }
        TRACE.message(level, "ffdc." + component, "FFDC " + record.id() + " " + kind + ": " + summary);
        write(record);
        return record;
    }

    private static void write(FfdcRecord record) {
        if (FILES.write(record) == FfdcFiles.FAILED) {
            WRITE_FAILURES.incrementAndGet();
        }
    }

    /**
     * The records kept in memory, oldest first.
     *
     * @return a copy
     */
    public static List<FfdcRecord> recent() {
        synchronized (RECENT) {
            return new ArrayList<>(RECENT);
        }
    }

    /**
     * The records kept in memory whose kind starts with {@code kindPrefix} and whose summary or
     * snapshot contains {@code text}.
     *
     * @param kindPrefix e.g. {@code "protocol."}
     * @param text e.g. a connection id; empty matches every record
     * @return the matching records, oldest first
     */
    public static List<FfdcRecord> find(String kindPrefix, String text) {
        List<FfdcRecord> out = new ArrayList<>();
        for (FfdcRecord r : recent()) {
            if (r.kind().startsWith(kindPrefix) && (r.summary().contains(text) || r.snapshot().contains(text))) {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * Records not written to files because a cap ({@link #MAX_FILES_PROP}, {@link #MAX_TOTAL_BYTES_PROP})
     * was reached; they are still in memory.
     *
     * @return the count
     */
    public static long filesSkipped() {
        return FILES.skipped();
    }

    /**
     * How many record files could not be written.
     *
     * @return the count
     */
    public static long writeFailures() {
        return WRITE_FAILURES.get();
    }
}
