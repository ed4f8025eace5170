package io.jsdp.flow.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * A deterministic byte stream for integrity tests: the bytes at stream offset {@code o} are
 * {@code PATTERN[o % PERIOD]}, where the pattern is random and its period is odd, so no write or read
 * size lines up with it. Writers and readers take random sizes, log-uniform between 1 byte and a
 * maximum, and keep a CRC-32C of what they moved; both ends compare counts and checksums.
 */
public final class StreamCheck {
    /** The pattern's period: prime, larger than the largest write. */
    static final int PERIOD = 1_048_583;
    private static final byte[] PATTERN = new byte[PERIOD + (1 << 20) + 1];

    static {
        new SplittableRandom(0x5D9).nextBytes(PATTERN);
        System.arraycopy(PATTERN, 0, PATTERN, PERIOD, PATTERN.length - PERIOD);
    }

    private StreamCheck() {
    }

    /** A size between 1 and {@code max}, log-uniform. */
    static int size(SplittableRandom r, int max) {
        double bits = r.nextDouble() * (Math.log(max) / Math.log(2));
        return (int) Math.max(1, Math.min(max, Math.round(Math.pow(2, bits))));
    }

    /** What one end moved. */
    public record Result(long bytes, long crc, long operations) {
    }

    /**
     * Writes {@code total} bytes of the pattern in random sizes up to {@code maxWrite}, then shuts
     * the output down.
     *
     * @param c the connection
     * @param total bytes to write
     * @param maxWrite the largest write
     * @param seed the sizes' seed
     * @param direct whether to write from a direct buffer
     * @return the count and checksum
     * @throws IOException when the connection fails
     * @throws InterruptedException when interrupted
     */
    public static Result write(SdpConnection c, long total, int maxWrite, long seed, boolean direct)
        throws IOException, InterruptedException {
        return write(c, total, maxWrite, seed, direct, new AtomicLong());
    }

    /**
     * {@link #write(SdpConnection, long, int, long, boolean)}, counting the bytes written so far in
     * {@code progress} as it goes.
     *
     * @param c the connection
     * @param total bytes to write
     * @param maxWrite the largest write
     * @param seed the sizes' seed
     * @param direct whether to write from a direct buffer
     * @param progress the bytes written so far
     * @return the count and checksum
     * @throws IOException when the connection fails
     * @throws InterruptedException when interrupted
     */
    public static Result write(SdpConnection c, long total, int maxWrite, long seed, boolean direct, AtomicLong progress)
        throws IOException, InterruptedException {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer src = direct ? ByteBuffer.allocateDirect(PATTERN.length) : ByteBuffer.wrap(PATTERN);
        if (direct) {
            src.put(PATTERN).clear();
        }
        CRC32C crc = new CRC32C();
        long done = 0;
        long ops = 0;
        while (done < total) {
            int n = (int) Math.min(size(r, maxWrite), total - done);
            int at = (int) (done % PERIOD);
            src.limit(at + n).position(at);
            crc.update(src.duplicate());
            Blocking.writeFully(c, src);
            done += n;
            progress.lazySet(done);
            ops++;
        }
        c.shutdownOutput();
        return new Result(done, crc.getValue(), ops);
    }

    /**
     * Reads until EOF in random sizes up to {@code maxRead}, checking every byte against the pattern.
     *
     * @param c the connection
     * @param maxRead the largest read
     * @param seed the sizes' seed
     * @return the count and checksum
     * @throws IOException when the connection fails or a byte is wrong
     * @throws InterruptedException when interrupted
     */
    public static Result read(SdpConnection c, int maxRead, long seed) throws IOException, InterruptedException {
        return read(c, maxRead, seed, new AtomicLong());
    }

    /**
     * {@link #read(SdpConnection, int, long)}, counting the bytes read so far in {@code progress}.
     *
     * @param c the connection
     * @param maxRead the largest read
     * @param seed the sizes' seed
     * @param progress the bytes read and checked so far
     * @return the count and checksum
     * @throws IOException when the connection fails or a byte is wrong
     * @throws InterruptedException when interrupted
     */
    public static Result read(SdpConnection c, int maxRead, long seed, AtomicLong progress)
        throws IOException, InterruptedException {
        SplittableRandom r = new SplittableRandom(seed);
        ByteBuffer dst = ByteBuffer.allocateDirect(maxRead);
        CRC32C crc = new CRC32C();
        long done = 0;
        long ops = 0;
        for (;;) {
            dst.clear().limit(size(r, maxRead));
            int n = Blocking.read(c, dst);
            if (n == SdpConnection.EOF) {
                return new Result(done, crc.getValue(), ops);
            }
            dst.flip();
            int at = (int) (done % PERIOD);
            if (!dst.equals(ByteBuffer.wrap(PATTERN, at, n))) {
                throw new IOException("wrong bytes in the " + n + "-byte read at stream offset " + done);
            }
            crc.update(dst);
            done += n;
            progress.lazySet(done);
            ops++;
        }
    }
}
