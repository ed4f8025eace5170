package io.jsdp.bench.jmh;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The memory the raw baselines share between the benchmark JVM and its peer: a file of this user
 * only (mode 0600, in a fresh 0700 directory under {@code /dev/shm}) that both sides map. The
 * creator {@linkplain #unlink() unlinks} it as soon as the peer has mapped it too, so nothing is
 * left behind even when a process is killed; the mappings live until the processes end.
 */
final class SharedFile {
    private static final Path SHM = Path.of("/dev/shm");

    private final Path directory;
    private final Path file;
    private final MappedByteBuffer buffer;

    private SharedFile(Path directory, Path file, MappedByteBuffer buffer) {
        this.directory = directory;
        this.file = file;
        this.buffer = buffer;
    }

    /**
     * Creates and maps a zeroed file of {@code bytes}.
     *
     * @param bytes the size
     * @return the file, to be unlinked by the caller
     * @throws IOException when it cannot be created or mapped
     */
    static SharedFile create(int bytes) throws IOException {
        Path base = Files.isDirectory(SHM) ? SHM : Path.of(System.getProperty("java.io.tmpdir"));
        Path dir = Files.createTempDirectory(base, "jsdp-bench-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path f = dir.resolve("shared");
        try {
            Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            return new SharedFile(dir, f, map(f, bytes));
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(f);
            Files.deleteIfExists(dir);
            throw e;
        }
    }

    /**
     * Maps an existing file (the peer's side).
     *
     * @param file the path the creator passed
     * @param bytes the size
     * @return the mapping
     * @throws IOException when it cannot be mapped
     */
    static MappedByteBuffer map(Path file, int bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // Mapping beyond the end grows the file; the pages are zero.
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
        }
    }

    /**
     * The file's path, for the peer.
     *
     * @return the path
     */
    Path path() {
        return file;
    }

    /**
     * The creator's mapping.
     *
     * @return the buffer
     */
    MappedByteBuffer buffer() {
        return buffer;
    }

    /** Removes the file and its directory; mappings stay valid. Idempotent. */
    void unlink() {
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            System.err.println("could not delete " + file + ": " + e);
        }
    }
}
