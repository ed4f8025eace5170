package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link FfdcFiles}: the caps on FFDC files — count, bytes per record, bytes in all. */
@Timeout(20)
class FfdcFilesTest {
    @TempDir
    Path dir;

    private static FfdcRecord record(long id, int snapshotChars) {
        return new FfdcRecord(id, 0, "sdp", "connection.TEST", "connection " + id + " failed", "x".repeat(snapshotChars),
            List.of("history line"));
    }

    private long fileCount() throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    @Test
    void cutsARecordLongerThanTheSizeCapAndSaysSo() throws Exception {
        FfdcFiles files = new FfdcFiles(dir.toString(), 10, 2048, 1 << 20);
        assertEquals(FfdcFiles.WRITTEN, files.write(record(1, 10_000)));
        assertEquals(FfdcFiles.WRITTEN, files.write(record(2, 10)));
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                byte[] bytes = Files.readAllBytes(p);
                String text = new String(bytes, StandardCharsets.UTF_8);
                assertTrue(bytes.length <= 2048, p + " has " + bytes.length + " bytes");
                if (p.toString().endsWith("-1.txt")) {
                    assertEquals(2048, bytes.length);
                    assertTrue(text.startsWith("jsdp FFDC record 1\n"), text);
                    assertTrue(text.endsWith("(record cut at 2048 of " + record(1, 10_000).render().length()
                        + " bytes, jsdp.ffdc.maxRecordBytes)\n"), text.substring(text.length() - 100));
                } else {
                    assertTrue(text.endsWith("history line\n"), "a short record is whole: " + text);
                }
            }
        }
    }

    @Test
    void writesNoMoreThanTheFileCap() throws Exception {
        FfdcFiles files = new FfdcFiles(dir.toString(), 3, 4096, 1 << 20);
        for (int i = 1; i <= 5; i++) {
            files.write(record(i, 10));
        }
        assertEquals(3, fileCount());
        assertEquals(2, files.skipped());
    }

    @Test
    void writesNoMoreThanTheTotalByteCap() throws Exception {
        FfdcFiles files = new FfdcFiles(dir.toString(), 100, 4096, 3 * 4096);
        for (int i = 1; i <= 6; i++) {
            assertTrue(files.write(record(i, 8000)) != FfdcFiles.FAILED);
        }
        assertEquals(3, fileCount(), "three full-size records fit in three times the record cap");
        assertEquals(3, files.skipped());
        assertTrue(files.bytesWritten() <= 3 * 4096);
        assertEquals(FfdcFiles.WRITTEN, new FfdcFiles(dir.resolve("sub").toString(), 1, 4096, 4096).write(record(7, 1)));
    }
}
