package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 8 (seed 001 §4.1.4, §4.3): data the writer left in its send buffer when the peer had no room,
 * while the writer's application makes no call on the connection ("computes"). NIC-assisted: the
 * device holds the messages beyond the credits and sends each as the reader posts a buffer, and the
 * progress thread hands the coalesced rest to the device — everything arrives. Credit-based (jsdp's):
 * the progress thread posts held slots as credits return — everything arrives. Packetized: only what
 * went out during the writes (at most the reader's ring) arrives; the rest waits for the writer's next
 * call, though the reader freed the ring long before.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressWithoutApplicationTest {
    private static final long QUIET_NS = TimeUnit.MILLISECONDS.toNanos(300);
    private static final Pattern DEVICE = Pattern.compile("deviceOutstanding=(\\d+)");

    private static SdpOptions options(FlowControlScheme scheme) {
        return new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(8).flowControl(scheme);
    }

    /** Writes without blocking until the send buffer is full. */
    static long fill(SdpConnection c) {
        ByteBuffer src = ByteBuffer.allocate(1024);
        long total = 0;
        byte b = 0;
        for (;;) {
            src.clear();
            for (int i = 0; i < src.capacity(); i++) {
                src.put(i, (byte) (b + i));
            }
            int n = c.write(src);
            if (n <= 0) {
                return total;
            }
            total += n;
            b += (byte) n;
        }
    }

    /** Reads until nothing more arrives for {@link #QUIET_NS}, checking the pattern. */
    static long readUntilQuiet(SdpConnection c, long already) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(8192);
        long total = already;
        long quietSince = System.nanoTime();
        while (System.nanoTime() - quietSince < QUIET_NS) {
            dst.clear();
            int n = c.read(dst);
            assertTrue(n >= 0, "read " + n);
            for (int i = 0; i < n; i++) {
                assertEquals((byte) (total + i), dst.get(i), "byte " + (total + i));
            }
            if (n > 0) {
                total += n;
                quietSince = System.nanoTime();
            } else {
                Thread.sleep(1);
            }
        }
        return total;
    }

    @Test
    void nicAssistedDeviceMovesHeldDataWhileTheWriterComputes() throws Exception {
        try (SdpPair p = SdpPair.open(options(FlowControlScheme.NIC), options(FlowControlScheme.NIC))) {
            assertEquals(FlowControlScheme.NIC, p.a.flowControlScheme());
            long written = fill(p.a);
            Thread.sleep(50);
            Matcher m = DEVICE.matcher(p.a.snapshot());
            assertTrue(m.find() && Integer.parseInt(m.group(1)) > 0, "messages wait in the device beyond the credits: "
                + p.a.snapshot());
            assertEquals(written, readUntilQuiet(p.b, 0), "everything arrived without a call on the writer:\n" + p.a.snapshot());
        }
    }

    @Test
    void creditBasedProgressThreadMovesHeldDataWhileTheWriterComputes() throws Exception {
        try (SdpPair p = SdpPair.open(options(FlowControlScheme.CREDIT), options(FlowControlScheme.CREDIT))) {
            long written = fill(p.a);
            assertEquals(written, readUntilQuiet(p.b, 0), "everything arrived without a call on the writer:\n" + p.a.snapshot());
        }
    }

    @Test
    void packetizedHeldDataWaitsForTheWritersNextCall() throws Exception {
        try (SdpPair p = SdpPair.open(options(FlowControlScheme.PACKETIZED), options(FlowControlScheme.PACKETIZED))) {
            assertEquals(FlowControlScheme.PACKETIZED, p.a.flowControlScheme());
            long written = fill(p.a);
            int ring = 3 * 4096;
            assertTrue(written > ring, "the send buffer holds more than the peer's ring: " + written);
            long first = readUntilQuiet(p.b, 0);
            // what went out during the writes (bounded by the ring and by the RingData notifications' credits)
            assertTrue(first > 0 && first <= ring, "at most the peer's ring arrived while the writer computed: " + first
                + "\n" + p.a.snapshot());
            p.a.readyOps(); // the writer's next call moves what the reader freed
            long all = first;
            while (all < written) {
                long before = all;
                all = readUntilQuiet(p.b, all);
                if (all == before) {
                    p.a.readyOps();
                }
            }
            assertEquals(written, all);
        }
    }
}
