package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The engine's Flight Recorder events, recorded with {@link Recording} and read back from the file. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionEventsJfrTest {
    private static final SdpOptions SMALL = new SdpOptions().bufferBytes(4096).receiveBuffers(4).sendBuffers(3);

    @Test
    void lifecycleAndStallEventsAreRecorded(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("connection-events.jfr");
        long idA;
        long idB;
        long sent;
        try (Recording r = new Recording()) {
            r.enable("io.jsdp.ConnectionEstablished");
            r.enable("io.jsdp.ConnectionClosed");
            r.enable("io.jsdp.CreditStall").withThreshold(Duration.ZERO);
            r.start();
            try (SdpPair p = SdpPair.open(SMALL, SMALL.copy())) {
                idA = p.a.id();
                idB = p.b.id();
                sent = ConnectionStatisticsTest.fillUntilStalled(p.a);
                Thread.sleep(10);
                ByteBuffer all = ByteBuffer.allocate((int) sent);
                Blocking.readFully(p.b, all);
                Blocking.writeFully(p.a, ByteBuffer.allocate(10)); // takes bytes: the stall ends
                Blocking.readFully(p.b, ByteBuffer.allocate(10));
                p.a.close();
                p.b.close();
                ConnectionStatisticsTest.awaitReleased(p.a);
                ConnectionStatisticsTest.awaitReleased(p.b);
            }
            r.stop();
            r.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertFalse(events.isEmpty(), "nothing recorded");

        List<RecordedEvent> established = ofType(events, "io.jsdp.ConnectionEstablished");
        assertEquals(2, established.size(), established.toString());
        for (RecordedEvent e : established) {
            assertEquals("sdp", e.getString("transport"));
            assertEquals("credit", e.getString("flowControl"));
            assertTrue(e.getString("remote").matches("127\\.0\\.0\\.1:[0-9]+"), e.toString());
            assertEquals(e.getLong("connectionId") == idA, e.getBoolean("active"), e.toString());
        }

        List<RecordedEvent> stalls = ofType(events, "io.jsdp.CreditStall");
        assertEquals(1, stalls.size(), stalls.toString());
        RecordedEvent stall = stalls.get(0);
        assertEquals(idA, stall.getLong("connectionId"));
        assertFalse(stall.getBoolean("endedByClose"));
        assertTrue(stall.getDuration().toNanos() >= TimeUnit.MILLISECONDS.toNanos(10), stall.toString());

        List<RecordedEvent> closed = ofType(events, "io.jsdp.ConnectionClosed");
        assertEquals(2, closed.size(), closed.toString());
        for (RecordedEvent e : closed) {
            boolean isA = e.getLong("connectionId") == idA;
            assertTrue(isA || e.getLong("connectionId") == idB, e.toString());
            assertEquals(isA ? sent + 10 : 0, e.getLong("bytesSent"), e.toString());
            assertEquals(isA ? 0 : sent + 10, e.getLong("bytesReceived"), e.toString());
            assertEquals(isA ? 1 : 0, e.getLong("creditStalls"), e.toString());
            assertEquals(0, e.getLong("rnrRetries"), "credit-based flow control makes no RNR retries: " + e);
            assertNull(e.getString("failure"), e.toString());
        }
        assertTrue(Files.size(file) > 0);
    }

    private static List<RecordedEvent> ofType(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).collect(Collectors.toList());
    }
}
