package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSocketOptions;
import io.jsdp.flow.engine.SpinGovernor;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A selection that finds nothing ready spins on its SDP keys before it blocks (issue 27: a round trip
 * answered within the window costs no wake-up), and the spin keeps {@link Selector}'s contract: a
 * {@code wakeup()}, an interrupt and the selection's timeout each end it at once, and data that
 * arrives meanwhile is selected. The selector here spins for 5 s under a governor that does not adapt
 * (it always lets the selector spin, and a spin it deschedules goes on), so each case would otherwise
 * last the whole window.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SelectorSpinTest extends ConformanceBase {
    private static final long SPIN_NS = TimeUnit.SECONDS.toNanos(5);

    private final SpinGovernor governor = new SpinGovernor(false, 0, 2, () -> -1);

    private Selector spinningSelector() throws Exception {
        return track(new HybridSelector(JSDP, SelectorProvider.provider().openSelector(), SPIN_NS, governor));
    }

    /** A connected SDP pair: [client, accepted]; the accepted end registered for reading. */
    private SocketChannel[] pair(Selector sel) throws Exception {
        ServerSocketChannel s = track(BlockedChannelStopConformanceTest.listen(JSDP));
        SocketChannel[] ends = BlockedChannelStopConformanceTest.pair(JSDP, s);
        track(ends[0]);
        track(ends[1]);
        String transport = ends[1].getOption(SdpSocketOptions.TRANSPORT);
        assertTrue(transport.startsWith("sdp"), transport);
        ends[1].configureBlocking(false);
        ends[1].register(sel, SelectionKey.OP_READ);
        return ends;
    }

    /** Runs {@code action} on a new thread 100 ms from now, while the caller's selection spins. */
    private static Thread later(Runnable action) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            action.run();
        }, "later");
        t.start();
        return t;
    }

    @Test
    void dataArrivingDuringTheSpinIsSelectedWithoutWaitingOutTheWindow() throws Exception {
        Selector sel = spinningSelector();
        SocketChannel[] ends = pair(sel);
        long spinsBefore = governor.spins();
        Thread writer = later(() -> {
            try {
                ends[0].write(ByteBuffer.wrap(new byte[] {7}));
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        });
        long t0 = System.nanoTime();
        int n = sel.select();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        writer.join();
        assertEquals(1, n);
        assertTrue(ms < 2_000, "selected after " + ms + " ms");
        assertTrue(governor.spins() > spinsBefore, "the selection spun");
    }

    @Test
    void aWakeupEndsASpinningSelection() throws Exception {
        Selector sel = spinningSelector();
        pair(sel);
        Thread waker = later(sel::wakeup);
        long t0 = System.nanoTime();
        int n = sel.select();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        waker.join();
        assertEquals(0, n);
        assertTrue(ms < 2_000, "woken after " + ms + " ms");
        sel.wakeup(); // before a selection: the next one returns at once, spin or not
        t0 = System.nanoTime();
        assertEquals(0, sel.select());
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 2_000);
    }

    @Test
    void anInterruptEndsASpinningSelectionAndStays() throws Exception {
        Selector sel = spinningSelector();
        pair(sel);
        Thread me = Thread.currentThread();
        Thread interrupter = later(me::interrupt);
        long t0 = System.nanoTime();
        int n = sel.select();
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        interrupter.join();
        assertEquals(0, n);
        assertTrue(ms < 2_000, "interrupted after " + ms + " ms");
        assertTrue(Thread.interrupted(), "the interrupt status stays, as with the JDK's selector");
        assertTrue(sel.isOpen());
    }

    @Test
    void theSelectionsTimeoutBoundsTheSpin() throws Exception {
        Selector sel = spinningSelector();
        pair(sel);
        long t0 = System.nanoTime();
        assertEquals(0, sel.select(100));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms >= 90 && ms < 2_000, "returned after " + ms + " ms");
    }
}
