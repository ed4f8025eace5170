package io.jsdp.ras;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
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
 *
 * <p>Capture does no I/O: the code that sees a failure usually holds its connection's lock, and a slow
 * disk or a blocked log must not hold that connection (nor its peer's progress) up. The record is kept
 * in memory and its event put into the flight recorder at once; its log line and its file are written
 * by one daemon thread ({@code jsdp-ffdc}), in capture order. At most {@link #QUEUE} records wait for
 * it; more are kept in memory only and counted with {@link #filesSkipped()}. At a normal exit the
 * thread gets up to a second to finish ({@link #awaitWritten}).
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

    /** The most records waiting for the writer thread. */
    static final int QUEUE = 256;
    private static final LinkedBlockingQueue<Pending> PENDING = new LinkedBlockingQueue<>(QUEUE);
    private static final AtomicLong QUEUED = new AtomicLong();
    private static final AtomicLong DONE = new AtomicLong();
    private static final AtomicLong DROPPED = new AtomicLong();
    private static final Object WRITER_LOCK = new Object();
    /** Guarded by WRITER_LOCK. */
    private static Thread writer;
    /** Tests: run by the writer before each record (to hold it up). */
    static volatile Runnable beforeWrite;

    /** A record and the level of its log line, waiting for the writer. */
    private record Pending(FfdcRecord record, int level) {
    }

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
        TRACE.ringOnly(level, "ffdc." + component);
        if (PENDING.offer(new Pending(record, level))) {
            QUEUED.incrementAndGet();
            ensureWriter();
        } else {
            DROPPED.incrementAndGet(); // the writer is far behind: the record stays in memory only
        }
        return record;
    }

    private static void ensureWriter() {
        synchronized (WRITER_LOCK) {
            if (writer != null) {
                return;
            }
            Thread t = new Thread(Ffdc::writeLoop, "jsdp-ffdc");
            t.setDaemon(true);
            writer = t;
            t.start();
            try {
                Runtime.getRuntime().addShutdownHook(new Thread(() -> awaitWritten(1_000), "jsdp-ffdc-exit"));
            } catch (IllegalStateException exiting) {
                // the JVM is already exiting: what the writer finishes before it ends is written
            }
        }
    }

    private static void writeLoop() {
        for (;;) {
            Pending p;
            try {
                p = PENDING.take();
            } catch (InterruptedException e) {
                continue; // nobody interrupts this thread on purpose; it serves until the JVM ends
            }
            try {
                Runnable hook = beforeWrite;
                if (hook != null) {
                    hook.run();
                }
                FfdcRecord r = p.record();
                TRACE.emit(p.level(), "FFDC " + r.id() + " " + r.kind() + ": " + r.summary());
                if (FILES.write(r) == FfdcFiles.FAILED) {
                    WRITE_FAILURES.incrementAndGet();
                }
            } catch (RuntimeException | Error e) {
                WRITE_FAILURES.incrementAndGet(); // a broken log must not end the writer
            } finally {
                synchronized (DONE) {
                    DONE.incrementAndGet();
                    DONE.notifyAll();
                }
            }
        }
    }

    /**
     * Waits until every record captured so far has had its log line and file written (or its write failed).
     *
     * @param timeoutMs the longest wait
     * @return true when nothing is left to write
     */
    public static boolean awaitWritten(long timeoutMs) {
        long target = QUEUED.get();
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        synchronized (DONE) {
            while (DONE.get() < target) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    DONE.wait(Math.max(1, left / 1_000_000L));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
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
     * was reached, or because {@link #QUEUE} records were already waiting for the writer; they are still
     * in memory.
     *
     * @return the count
     */
    public static long filesSkipped() {
        return FILES.skipped() + DROPPED.get();
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
