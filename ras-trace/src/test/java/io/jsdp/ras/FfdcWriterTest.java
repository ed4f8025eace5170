package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30: capture does no I/O on the failing thread, which usually holds its connection's lock. The
 * record is kept and its event is in the flight recorder when capture returns; the log line and the file
 * are written by the {@code jsdp-ffdc} thread, so a writer held up (a slow disk, a blocked log) holds up
 * no capture.
 */
@Timeout(30)
class FfdcWriterTest {
    @Test
    void captureReturnsWhileTheWriterIsHeldUpAndTheWriterCatchesUpAfter() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch hold = new CountDownLatch(1);
        StringBuffer writers = new StringBuffer();
        Ffdc.beforeWrite = () -> {
            writers.append(Thread.currentThread().getName()).append(' ');
            entered.countDown();
            try {
                hold.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        try {
            Ffdc.capture("writertest", "test.FIRST", "first", "snapshot");
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the writer took the first record");
            // with the writer stuck, further captures still return at once, kept in memory
            CompletableFuture<FfdcRecord> second = CompletableFuture.supplyAsync(
                () -> Ffdc.capture("writertest", "test.SECOND", "second", "snapshot"));
            FfdcRecord r = second.get(10, TimeUnit.SECONDS);
            assertEquals("test.SECOND", r.kind());
            assertFalse(Ffdc.find("test.SECOND", "second").isEmpty(), "kept in memory before it is written");
            assertFalse(Ffdc.awaitWritten(50), "not written while the writer is held up");
        } finally {
            hold.countDown();
        }
        assertTrue(Ffdc.awaitWritten(10_000), "written once the writer goes on");
        Ffdc.beforeWrite = null;
        assertTrue(writers.toString().matches("(jsdp-ffdc )+"), "written on the writer thread only: " + writers);
    }
}
