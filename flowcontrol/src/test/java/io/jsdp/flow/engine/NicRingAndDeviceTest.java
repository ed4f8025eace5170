package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NIC-assisted flow control's two data paths on one connection (seed 001 §4.3): packetized's ring while
 * the peer's ring has room, Data messages held by the device beyond it. The reader must give the bytes
 * in stream order although they sit in two places: ring bytes announced before a device message come
 * before it, ring bytes announced after it come after it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NicRingAndDeviceTest {
    private static final int BUFFER = 4096;
    private static final int RECEIVE_BUFFERS = 3;
    /** The reader's ring: its receive buffers' bytes. */
    private static final int RING = RECEIVE_BUFFERS * BUFFER;
    /** The virtual window W: a receive buffer's payload. */
    private static final int W = BUFFER - 16;
    private static final Pattern DEVICE = Pattern.compile("device messages posted=(\\d+)");
    private static final Pattern QUEUED = Pattern.compile("queued before messages=(\\d+)");
    private static final Pattern STREAM = Pattern.compile("ring stream written=\\d+ posted=(\\d+)");

    private static SdpOptions options() {
        return new SdpOptions().bufferBytes(BUFFER).receiveBuffers(RECEIVE_BUFFERS).sendBuffers(8)
            .flowControl(FlowControlScheme.NIC);
    }

    private static long number(Pattern p, SdpConnection c) {
        Matcher m = p.matcher(c.snapshot());
        assertTrue(m.find(), c::snapshot);
        return Long.parseLong(m.group(1));
    }

    /** Byte {@code i} of the test stream. */
    private static byte at(long i) {
        return (byte) (i * 131 + (i >>> 9));
    }

    private static ByteBuffer chunk(long from, int n) {
        ByteBuffer b = ByteBuffer.allocate(n);
        for (int i = 0; i < n; i++) {
            b.put(i, at(from + i));
        }
        return b;
    }

    /** Writes all of {@code n} stream bytes from {@code from}, waiting while the send buffer is full. */
    private static void writeAll(SdpConnection c, long from, int n) throws IOException, InterruptedException {
        Blocking.writeFully(c, chunk(from, n));
    }

    /** Reads exactly {@code n} bytes, checking each against the stream from {@code from}. */
    private static void readExactly(SdpConnection c, long from, int n) throws IOException, InterruptedException {
        ByteBuffer b = ByteBuffer.allocate(n);
        Blocking.readFully(c, b);
        for (int i = 0; i < n; i++) {
            assertEquals(at(from + i), b.get(i), "stream byte " + (from + i));
        }
    }

    private static void awaitTrue(BooleanSupplier condition, SdpPair p) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, () -> p.a.snapshot() + "\n" + p.b.snapshot());
            Thread.sleep(1);
        }
    }

    @Test
    void ringBytesDeviceMessagesAndRingBytesAgainArriveInStreamOrder() throws Exception {
        try (SdpPair p = SdpPair.open(options(), options())) {
            assertEquals(FlowControlScheme.NIC, p.a.flowControlScheme());
            // 1. the reader's ring filled by RDMA WRITE
            writeAll(p.a, 0, RING);
            awaitTrue(() -> p.b.available() == RING, p);
            assertEquals(0, number(DEVICE, p.a), "the ring had room: no device message yet");
            // 2. beyond the ring: device messages, which the reader's posted buffers take without its application
            writeAll(p.a, RING, 2 * W);
            awaitTrue(() -> p.b.available() == RING + 2 * W, p);
            assertEquals(2, number(DEVICE, p.a), p.a::snapshot);
            assertEquals(RING, number(QUEUED, p.b), "the ring's bytes come before the messages: " + p.b.snapshot());
            // 3. the reader frees the ring (its RingAck lets the writer write into it again), the device messages wait
            readExactly(p.b, 0, RING);
            awaitTrue(() -> {
                p.a.readyOps(); // a call on the writer: it takes the RingAck and its device messages' completions
                String a = p.a.snapshot();
                return a.contains("deviceOutstanding=0") && a.contains("peerConsumed=" + RING);
            }, p);
            writeAll(p.a, RING + 2 * W, 1000);
            awaitTrue(() -> p.b.available() == 2 * W + 1000, p);
            assertEquals(2, number(DEVICE, p.a), "the ring had room again: " + p.a.snapshot());
            assertEquals(0, number(QUEUED, p.b));
            // 4. the messages, then the ring bytes written after them
            readExactly(p.b, RING, 2 * W + 1000);
            assertEquals(0, p.b.available());
        }
    }

    @Test
    void writesBehindARingDataInFlightWaitInTheSendRingAndGoAsOneWriteWhenItCompletes() throws Exception {
        SdpOptions o = options().noDelay(true);
        try (SdpPair p = SdpPair.open(o, o)) {
            // long enough that the eleven writes below surely come while the first RingData is in flight
            p.deviceA.faults().operationDelayNs(TimeUnit.MILLISECONDS.toNanos(500));
            assertEquals(10, p.a.write(chunk(0, 10)), "the first write goes at once, with its RingData");
            for (int i = 1; i < 12; i++) {
                assertEquals(10, p.a.write(chunk(i * 10L, 10)));
            }
            Matcher m = STREAM.matcher(p.a.snapshot());
            assertTrue(m.find(), p.a::snapshot);
            assertEquals(10, Long.parseLong(m.group(1)), "only the first write was posted while its RingData is in flight: "
                + p.a.snapshot());
            // no call on A from here on: its progress thread posts the held bytes when the RingData completes
            readExactly(p.b, 0, 120);
            p.deviceA.faults().clear();
        }
    }

    @Test
    void aSlowReaderGetsAMixedStreamIntactWhileTheWriterAlternatesBetweenThePaths() throws Exception {
        try (SdpPair p = SdpPair.open(options(), options())) {
            long total = 3L << 20;
            SplittableRandom r = new SplittableRandom(7);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                SplittableRandom w = new SplittableRandom(8);
                try {
                    for (long done = 0; done < total;) {
                        int n = (int) Math.min(total - done, StreamCheck.size(w, 3 * BUFFER));
                        writeAll(p.a, done, n);
                        done += n;
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            writer.start();
            long sawQueued = 0;
            for (long done = 0; done < total;) {
                if (r.nextInt(8) == 0) {
                    Thread.sleep(1); // the writer fills the ring and goes on through the device
                }
                sawQueued = Math.max(sawQueued, number(QUEUED, p.b));
                int n = (int) Math.min(total - done, StreamCheck.size(r, 2 * BUFFER));
                readExactly(p.b, done, n);
                done += n;
            }
            writer.join(TimeUnit.SECONDS.toMillis(20));
            assertNull(failed.get(), () -> "the writer: " + failed.get());
            assertTrue(number(DEVICE, p.a) > 0, "the device path was used: " + p.a.snapshot());
            assertTrue(sawQueued > 0, "ring bytes were seen waiting before a device message");
            assertEquals(0, p.b.available());
        }
    }
}
