package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Waiters that park at once ({@code spinNs 0}) are woken by every arrival: the queue is armed only
 * when something waits for a completion, and armed once per event (issue 5: the per-message arm a
 * spinning connection paid was removed, so a lost arm would show up here as a stalled step).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ParkedWaiterWakeupTest {
    private static final int MIB = 1 << 20;

    @Test
    void parkedPingPongNeverMissesAWakeup() throws Exception {
        SdpOptions parkAtOnce = new SdpOptions().spinNs(0).noDelay(true);
        try (SdpPair p = SdpPair.open(parkAtOnce, parkAtOnce.copy())) {
            int rounds = 20_000;
            CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                ByteBuffer b = ByteBuffer.allocateDirect(64);
                try {
                    for (int i = 0; i < rounds; i++) {
                        b.clear();
                        Blocking.readFully(p.b, b);
                        b.flip();
                        Blocking.writeFully(p.b, b);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            ByteBuffer b = ByteBuffer.allocateDirect(64);
            for (int i = 0; i < rounds; i++) {
                b.clear();
                b.putInt(0, i);
                Blocking.writeFully(p.a, b);
                b.clear();
                Blocking.readFully(p.a, b);
                assertEquals(i, b.getInt(0), "round trip " + i);
            }
            echo.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void parkedWriterStarvedOfCreditsIsWokenByEachCreditUpdate() throws Exception {
        SdpOptions tiny = new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(2).spinNs(0);
        try (SdpPair p = SdpPair.open(tiny, tiny.copy())) {
            CompletableFuture<StreamCheck.Result> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return StreamCheck.read(p.b, MIB, 41);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            StreamCheck.Result w = StreamCheck.write(p.a, 64L * MIB, MIB, 42, true);
            StreamCheck.Result r = reader.get(60, TimeUnit.SECONDS);
            assertEquals(w.bytes(), r.bytes());
            assertEquals(w.crc(), r.crc());
        }
    }
}
