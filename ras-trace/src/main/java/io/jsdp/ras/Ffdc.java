package io.jsdp.ras;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * First-failure data capture (seed 000): when a connection is aborted, a device fails or a peer
 * breaks the protocol, the code that sees it calls {@link #capture} once with a snapshot of the
 * failing object. The record keeps the snapshot and the flight recorder's recent history, so the
 * first failure can be explained without reproducing it.
 *
 * <p>Records are kept in memory (the last {@link #KEEP_DEFAULT}, for {@link #recent()}) and, when
 * {@link #DIR_PROP} names a directory, written there as one text file each, at most
 * {@link #MAX_FILES_PROP} files of at most {@link #MAX_RECORD_BYTES} bytes per JVM. Capture never
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
    /** Records kept in memory. */
    public static final int KEEP_DEFAULT = 256;
    /** The largest record text; a longer snapshot is cut and says so. */
    public static final int MAX_RECORD_BYTES = 64 * 1024;
    /** History records from the flight recorder copied into each record. */
    public static final int HISTORY_RECORDS = 64;

    private static final TraceComponent TRACE = Trace.component("ffdc");
    private static final AtomicLong SEQUENCE = new AtomicLong();
    private static final AtomicLong WRITE_FAILURES = new AtomicLong();
    /** Guarded by itself. */
    private static final ArrayDeque<FfdcRecord> RECENT = new ArrayDeque<>();
    private static final String DIR = System.getProperty(DIR_PROP, DIR_DEFAULT).trim();
    private static final int MAX_FILES = parseMaxFiles(System.getProperty(MAX_FILES_PROP));
    private static final AtomicLong FILES_WRITTEN = new AtomicLong();

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

    /**
     * Captures one failure. Cheap enough for every abort, but not for hot paths.
     *
     * @param component the reporting component, e.g. {@code "sdp"}
     * @param kind a constant naming the failure, e.g. {@code "protocol.MSEQ_OUT_OF_ORDER"}
     * @param summary one line: what failed, where
     * @param snapshot the failing object's state, several lines
     * @return the record
     */
    public static FfdcRecord capture(String component, String kind, String summary, String snapshot) {
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
        TRACE.message(TraceLevel.ERROR, "ffdc." + component, "FFDC " + record.id() + " " + kind + ": " + summary);
        write(record);
        return record;
    }

    private static void write(FfdcRecord record) {
        if (DIR.isEmpty() || FILES_WRITTEN.getAndIncrement() >= MAX_FILES) {
            return;
        }
        Path file = Path.of(DIR, "jsdp-ffdc-" + ProcessHandle.current().pid() + "-" + record.id() + ".txt");
        try {
            Files.createDirectories(file.getParent());
            byte[] bytes = record.render().getBytes(StandardCharsets.UTF_8);
            Files.write(file, bytes.length > 2 * MAX_RECORD_BYTES ? Arrays.copyOf(bytes, 2 * MAX_RECORD_BYTES) : bytes);
        } catch (IOException | RuntimeException e) {
            WRITE_FAILURES.incrementAndGet();
            TRACE.record(TraceLevel.ERROR, "ffdc.writeFailed", e);
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
     * How many record files could not be written.
     *
     * @return the count
     */
    public static long writeFailures() {
        return WRITE_FAILURES.get();
    }
}
