package io.jsdp.ras;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes FFDC records to files under the caps of {@link Ffdc}: a count, a size per record (a longer
 * record is cut and ends saying so) and a total. Thread-safe: each writer reserves its file and its
 * bytes before writing, so concurrent captures never go past a cap.
 */
final class FfdcFiles {
    /** {@link #write} results. */
    static final int WRITTEN = 0;
    static final int SKIPPED = 1;
    static final int FAILED = 2;
    static final int NO_DIR = 3;

    private static final TraceComponent TRACE = Trace.component("ffdc");

    private final String dir;
    private final int maxFiles;
    private final int maxRecordBytes;
    private final long maxTotalBytes;
    private final AtomicLong files = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();

    FfdcFiles(String dir, int maxFiles, int maxRecordBytes, long maxTotalBytes) {
        this.dir = dir;
        this.maxFiles = maxFiles;
        this.maxRecordBytes = maxRecordBytes;
        this.maxTotalBytes = maxTotalBytes;
    }

    /** The file's bytes: the rendered record, cut to {@code maxRecordBytes} with a last line saying so. */
    byte[] encode(FfdcRecord record) {
        byte[] all = record.render().getBytes(StandardCharsets.UTF_8);
        if (all.length <= maxRecordBytes) {
            return all;
        }
        byte[] note = ("\n... (record cut at " + maxRecordBytes + " of " + all.length + " bytes, "
            + Ffdc.MAX_RECORD_BYTES_PROP + ")\n").getBytes(StandardCharsets.UTF_8);
        byte[] out = Arrays.copyOf(all, maxRecordBytes);
        System.arraycopy(note, 0, out, maxRecordBytes - note.length, note.length);
        return out;
    }

    int write(FfdcRecord record) {
        if (dir.isEmpty()) {
            return NO_DIR;
        }
        byte[] data = encode(record);
        if (files.incrementAndGet() > maxFiles) {
            files.decrementAndGet();
            skipped.incrementAndGet();
            return SKIPPED;
        }
        if (bytes.addAndGet(data.length) > maxTotalBytes) {
            bytes.addAndGet(-data.length);
            files.decrementAndGet();
            skipped.incrementAndGet();
            return SKIPPED;
        }
        Path file = Path.of(dir, "jsdp-ffdc-" + ProcessHandle.current().pid() + "-" + record.id() + ".txt");
        try {
            Files.createDirectories(file.getParent());
            Files.write(file, data);
            return WRITTEN;
        } catch (IOException | RuntimeException e) {
            TRACE.record(TraceLevel.ERROR, "ffdc.writeFailed", e);
            return FAILED;
        }
    }

    long skipped() {
        return skipped.get();
    }

    long bytesWritten() {
        return bytes.get();
    }
}
