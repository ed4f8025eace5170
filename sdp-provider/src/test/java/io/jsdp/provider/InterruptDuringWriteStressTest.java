package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.SdpSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 29, repeated: a writer on SDP whose peer never reads is interrupted at a random moment (before,
 * during or after it blocks), on platform and (JDK 21+) virtual threads in turn. Every time it must throw
 * {@link ClosedByInterruptException}, keep its interrupt status and leave the channel closed; a writer
 * that does not end within 10 s is a hang, reported with a dump of all threads. Bounded to
 * {@value #ITERATIONS_DEFAULT} iterations or 30 s; {@code -Djsdp.test.interruptStress.iterations=10000}
 * (with {@code .seconds}) for a longer manual run.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class InterruptDuringWriteStressTest extends ConformanceBase {
    static final int ITERATIONS_DEFAULT = 2_000;
    private static final int ITERATIONS = Integer.getInteger("jsdp.test.interruptStress.iterations", ITERATIONS_DEFAULT);
    private static final long SECONDS = Long.getLong("jsdp.test.interruptStress.seconds", 30);

    @Test
    void interruptingAWriterAtAnyMomentAlwaysGivesClosedByInterruptException() throws Exception {
        ServerSocketChannel s = track(BlockedChannelStopConformanceTest.listen(JSDP));
        SplittableRandom random = new SplittableRandom(29);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
        int done = 0;
        for (int i = 0; i < ITERATIONS && System.nanoTime() < deadline; i++) {
            SocketChannel[] ends = BlockedChannelStopConformanceTest.pair(JSDP, s);
            try {
                SocketChannel ch = ends[0];
                if (i == 0) {
                    String transport = ch.getOption(SdpSocketOptions.TRANSPORT);
                    assertTrue(transport.startsWith("sdp"), transport);
                }
                AtomicReference<Throwable> thrown = new AtomicReference<>();
                AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
                BlockedChannelStopConformanceTest.Kind kind = i % 2 == 1 && VirtualThreadsForTests.available()
                    ? BlockedChannelStopConformanceTest.Kind.VIRTUAL : BlockedChannelStopConformanceTest.Kind.PLATFORM;
                Thread writer = BlockedChannelStopConformanceTest.start(kind, () -> {
                    ByteBuffer b = ByteBuffer.allocate(32 * 1024);
                    try {
                        for (;;) {
                            b.clear();
                            ch.write(b); // the peer never reads: this blocks once its buffers are full
                        }
                    } catch (Throwable t) {
                        thrown.set(t);
                    }
                    interruptedAfter.set(Thread.currentThread().isInterrupted());
                });
                Thread.sleep(random.nextInt(4)); // before the first write, while writing, while blocked
                Thread interrupter = new Thread(writer::interrupt, "interrupter"); // it runs the close: keep this thread free
                interrupter.setDaemon(true);
                interrupter.start();
                writer.join(10_000);
                interrupter.join(1_000);
                if (writer.isAlive() || interrupter.isAlive()) {
                    fail("iteration " + i + " (" + kind + "): the interrupted writer hangs\n" + ThreadDumps.all(writer));
                }
                int n = i;
                assertEquals(ClosedByInterruptException.class, thrown.get() == null ? null : thrown.get().getClass(),
                    () -> "iteration " + n + " (" + kind + "): " + thrown.get());
                assertTrue(interruptedAfter.get(), "iteration " + i + ": interrupt status");
                assertFalse(ch.isOpen(), "iteration " + i + ": open");
            } finally {
                ends[0].close();
                ends[1].close();
            }
            done++;
        }
        assertTrue(done > 0, "no iteration ran");
        System.out.println("interrupt-during-write iterations: " + done);
    }
}
