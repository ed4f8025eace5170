package io.jsdp.testbed.shm;

import io.jsdp.ras.TraceLevel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A shared-memory segment: a file in the rendezvous directory mapped read-write, so every process
 * that maps it sees the same bytes (on tmpfs, {@code /dev/shm}, it is plain memory). The owner
 * creates it ({@link ShmNode#createSegment}); peers map it by name ({@link ShmNode#openSegment}).
 * The mapping is page-aligned, so any offset that is a multiple of 64 is cache-line aligned.
 *
 * <p>The mapping lives as long as its buffer is reachable (Java 17 has no explicit unmap); the file
 * is deleted by its owner on {@link #delete()} or node close, or by anyone once the owner is dead.
 * Peers' mappings stay valid after the file is deleted.
 */
public final class SharedSegment {
    /** Zeros written at a time to back a new segment that is not sparse: see {@link #create}. */
    private static final int FILL_CHUNK = 64 * 1024;

    private final Path path;
    private final MappedByteBuffer buffer;
    private final boolean owned;

    private SharedSegment(Path path, MappedByteBuffer buffer, boolean owned) {
        this.path = path;
        this.buffer = buffer;
        this.owned = owned;
    }

    /**
     * Creates and maps a new private (0600) segment of {@code bytes}, zero-filled.
     *
     * <p>Sparse when there is room: the file is only extended, and tmpfs allocates (zeroed) pages as
     * they are first touched, so a connection pays for the pages it uses, not for writing 1 MiB of
     * zeros per buffer area and wire (issue 7: that writing was most of a connection's set-up time).
     * The risk of a sparse file is that a page that cannot be allocated when first touched (a full
     * {@code /dev/shm}) faults (SIGBUS) instead of failing here. So the file is extended sparsely only
     * while the file system keeps at least {@code sparseReserveBytes} free beyond the segment; below
     * that, or with a negative reserve, zeros are written and "no space" is an IOException here.
     *
     * @param rendezvous the directory
     * @param path the file to create
     * @param bytes the size, positive
     * @param sparseReserveBytes free bytes that must remain beyond the segment for a sparse file; negative:
     *     never sparse ({@link ShmSettings#sparseReserveBytes()})
     * @return the segment
     * @throws IOException when the file exists, there is no room, or it cannot be mapped
     */
    static SharedSegment create(Rendezvous rendezvous, Path path, int bytes, long sparseReserveBytes) throws IOException {
        if (bytes <= 0) {
            throw new IllegalArgumentException("segment size " + bytes);
        }
        boolean sparse = sparseReserveBytes >= 0 && rendezvous.usableBytes() - bytes >= sparseReserveBytes;
        rendezvous.createPrivateFile(path);
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            if (sparse) {
                // mapping beyond the end of a file is undefined, so the file gets its length first: one
                // zero byte written at the last offset (a hole before it reads as zeros)
                ch.write(ByteBuffer.allocate(1), bytes - 1L);
            } else {
                ByteBuffer zeros = ByteBuffer.allocate(Math.min(bytes, FILL_CHUNK));
                for (long pos = 0; pos < bytes;) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), bytes - pos));
                    pos += ch.write(zeros, pos);
                }
            }
            return new SharedSegment(path, ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes), true);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(path);
            throw e;
        }
    }

    /**
     * Maps an existing segment.
     *
     * @param path the file
     * @return the segment
     * @throws IOException when it does not exist, is a link, or cannot be mapped
     */
    static SharedSegment open(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            long size = ch.size();
            if (size <= 0 || size > Integer.MAX_VALUE) {
                throw new IOException("segment " + path + " has unusable size " + size);
            }
            return new SharedSegment(path, ch.map(FileChannel.MapMode.READ_WRITE, 0, size), false);
        }
    }

    /**
     * The mapped memory.
     *
     * @return the buffer (direct, page-aligned)
     */
    public MappedByteBuffer buffer() {
        return buffer;
    }

    /**
     * The file.
     *
     * @return its path
     */
    public Path path() {
        return path;
    }

    /**
     * The file name, by which peers open it.
     *
     * @return the name
     */
    public String name() {
        return path.getFileName().toString();
    }

    /**
     * Whether this process created the segment (and so deletes its file).
     *
     * @return true for the owner's instance
     */
    public boolean owned() {
        return owned;
    }

    /** Deletes the file if this process created it; the mapping, here and at peers, stays valid. */
    public void delete() {
        if (owned) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                Rendezvous.TRACE.record(TraceLevel.RARE, "shm.deleteFailed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "SharedSegment[" + name() + ", " + buffer.capacity() + " bytes" + (owned ? ", owned" : "") + "]";
    }
}
