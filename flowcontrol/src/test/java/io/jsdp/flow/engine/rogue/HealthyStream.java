package io.jsdp.flow.engine.rogue;

import io.jsdp.flow.engine.Blocking;
import io.jsdp.flow.engine.SdpConnection;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A well-behaved connection streaming both ways while a rogue attacks another connection of the same
 * stack: each direction writes a deterministic byte stream until stopped, then shuts its output down;
 * the readers check every byte and count. Throttled (a 1 ms pause every 32 KiB) so it leaves the two
 * cores to the test; "untouched" means it keeps moving and every byte is right.
 */
final class HealthyStream implements AutoCloseable {
    private static final int CHUNK = 32 * 1024;
    private static final long PAUSE_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final SdpConnection x;
    private final SdpConnection y;
    private final ExecutorService pool = Executors.newFixedThreadPool(4, r -> {
        Thread t = new Thread(r, "healthy-stream");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong readXy = new AtomicLong();
    private final AtomicLong readYx = new AtomicLong();
    private volatile boolean stop;
    private final Future<Long> writeXy;
    private final Future<Long> writeYx;
    private final Future<Long> readerY;
    private final Future<Long> readerX;

    HealthyStream(SdpConnection x, SdpConnection y) {
        this.x = x;
        this.y = y;
        writeXy = pool.submit(() -> write(x));
        writeYx = pool.submit(() -> write(y));
        readerY = pool.submit(() -> read(y, readXy));
        readerX = pool.submit(() -> read(x, readYx));
    }

    static byte at(long offset) {
        return (byte) (offset ^ (offset >>> 9) ^ (offset >>> 17));
    }

    private long write(SdpConnection c) throws IOException, InterruptedException {
        ByteBuffer b = ByteBuffer.allocateDirect(CHUNK);
        long done = 0;
        while (!stop) {
            b.clear();
            for (int i = 0; i < CHUNK; i++) {
                b.put(i, at(done + i));
            }
            Blocking.writeFully(c, b);
            done += CHUNK;
            LockSupport.parkNanos(PAUSE_NS);
        }
        c.shutdownOutput();
        return done;
    }

    private static long read(SdpConnection c, AtomicLong count) throws IOException, InterruptedException {
        ByteBuffer b = ByteBuffer.allocateDirect(CHUNK);
        long done = 0;
        for (;;) {
            b.clear();
            int n = Blocking.read(c, b);
            if (n == SdpConnection.EOF) {
                return done;
            }
            for (int i = 0; i < n; i++) {
                if (b.get(i) != at(done + i)) {
                    throw new IOException("healthy stream: wrong byte at offset " + (done + i));
                }
            }
            done += n;
            count.set(done);
        }
    }

    /**
     * Bytes delivered so far in the slower direction.
     *
     * @return the count
     */
    long delivered() {
        return Math.min(readXy.get(), readYx.get());
    }

    /**
     * Waits until both directions delivered {@code more} bytes beyond what they had.
     *
     * @param more bytes
     * @param timeoutNs the longest wait
     * @throws AssertionError when the stream stalls
     */
    void awaitProgress(long more, long timeoutNs) throws InterruptedException {
        long a0 = readXy.get();
        long b0 = readYx.get();
        long deadline = System.nanoTime() + timeoutNs;
        while (readXy.get() - a0 < more || readYx.get() - b0 < more) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the healthy connection stalled: " + readXy.get() + "/" + readYx.get()
                    + " bytes\n" + x.snapshot() + y.snapshot());
            }
            Thread.sleep(1);
        }
    }

    /**
     * Stops the writers, lets the readers reach EOF and checks that every byte written arrived.
     *
     * @throws ExecutionException when a direction failed
     * @throws TimeoutException when a direction stalled
     */
    void stopAndVerify() throws ExecutionException, TimeoutException {
        stop = true;
        try {
            long wxy = writeXy.get(30, TimeUnit.SECONDS);
            long wyx = writeYx.get(30, TimeUnit.SECONDS);
            long ry = readerY.get(30, TimeUnit.SECONDS);
            long rx = readerX.get(30, TimeUnit.SECONDS);
            if (wxy != ry || wyx != rx) {
                throw new AssertionError("healthy stream lost bytes: wrote " + wxy + "/" + wyx + ", read " + ry + "/" + rx);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while stopping the healthy stream", e);
        } finally {
            pool.shutdownNow();
        }
    }

    @Override
    public void close() {
        stop = true;
        pool.shutdownNow();
    }
}
