package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SpinGovernor;
import io.jsdp.verbs.WakeChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A selector arms its SDP keys' wake channels only for a wait, and withdraws every arm the wait left
 * standing when it ends (issue 27): an arm that outlives its wait makes the peer ring an awake
 * selector once per armed connection, a system call on each side. The SDP channel here is a fake
 * whose wake channel counts its arms; a JDK pipe in the same selector ends the waits.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SelectorArmTest {

    /** A wake channel that records whether it is armed; its channel is a pipe the test can ring. */
    private static final class CountingWake implements WakeChannel {
        final Pipe pipe;
        volatile boolean armed;
        int arms;
        /** What {@link #quiet} answers: whether the device knows the queue pair holds nothing. */
        volatile boolean quiet;
        /** What {@link #disarm} answers: whether the peer took the arm (its ring went to another channel). */
        volatile boolean taken;

        CountingWake() throws IOException {
            pipe = Pipe.open();
            pipe.source().configureBlocking(false);
        }

        @Override
        public SelectableChannel channel() {
            return pipe.source();
        }

        @Override
        public boolean claim(Object waiter) {
            return true;
        }

        @Override
        public void release(Object waiter) {
            armed = false;
        }

        @Override
        public void arm(boolean sendsToo, int wait) {
            armed = true;
            arms++;
        }

        @Override
        public boolean quiet(boolean sendsToo) {
            return quiet;
        }

        @Override
        public boolean disarm() {
            armed = false;
            return taken;
        }

        @Override
        public boolean drain() {
            try {
                pipe.source().read(ByteBuffer.allocate(64));
                return true;
            } catch (IOException e) {
                return false;
            }
        }
    }

    /** An SDP channel that is never ready: only its wake channel matters here. */
    private static final class IdleSdpChannel extends AbstractSelectableChannel implements SdpSelectable {
        final CountingWake wake;
        volatile int polls;

        IdleSdpChannel(SelectorProvider provider, CountingWake wake) {
            super(provider);
            this.wake = wake;
        }

        @Override
        public void keyAdded(HybridSelector.HybridKey key) {
        }

        @Override
        public void keyRemoved(HybridSelector.HybridKey key) {
        }

        @Override
        public int nativeReadyOps() {
            polls++;
            return 0;
        }

        @Override
        public WakeChannel wakeChannel() {
            return wake;
        }

        @Override
        public boolean wakeOnSends() {
            return false;
        }

        @Override
        public int validOps() {
            return SelectionKey.OP_READ | SelectionKey.OP_WRITE;
        }

        @Override
        protected void implCloseSelectableChannel() {
        }

        @Override
        protected void implConfigureBlocking(boolean block) {
        }
    }

    @Test
    void aWaitArmsItsIdleKeysAndTheEndOfTheWaitWithdrawsTheArms() throws Exception {
        SpinGovernor noSpin = new SpinGovernor(false, 0, 2, () -> -1);
        CountingWake[] wakes = new CountingWake[3];
        Pipe jdk = Pipe.open();
        try (Selector sel = new HybridSelector(new io.jsdp.SdpSelectorProvider(), SelectorProvider.provider().openSelector(),
                0, noSpin)) {
            for (int i = 0; i < wakes.length; i++) {
                wakes[i] = new CountingWake();
                IdleSdpChannel ch = new IdleSdpChannel(sel.provider(), wakes[i]);
                ch.configureBlocking(false);
                ch.register(sel, SelectionKey.OP_READ);
            }
            jdk.source().configureBlocking(false);
            jdk.source().register(sel, SelectionKey.OP_READ);

            // nothing ready: the selection arms every idle key, waits, and the timeout ends the wait
            assertEquals(0, sel.select(20));
            for (CountingWake w : wakes) {
                assertEquals(1, w.arms, "armed for the wait");
                assertFalse(w.armed, "the arm withdrawn once the wait ended");
            }

            // the JDK channel ends the next wait: again armed for it, and disarmed after it
            jdk.sink().write(ByteBuffer.wrap(new byte[] {1}));
            assertEquals(1, sel.select(5_000));
            for (CountingWake w : wakes) {
                assertEquals(2, w.arms, "armed again before the next wait (no wake-up may be lost)");
                assertFalse(w.armed, "an awake selector leaves its peers nothing to ring");
            }

            // a busy selection (something ready at once) arms nothing: the arms are for waits only
            assertEquals(0, sel.selectNow());
            for (CountingWake w : wakes) {
                assertEquals(2, w.arms, "selectNow arms nothing");
            }

            // a ring ends the wait, and the rung key is armed again for the next one
            sel.selectedKeys().clear();
            jdk.source().read(ByteBuffer.allocate(8));
            Thread ringer = new Thread(() -> {
                try {
                    while (!wakes[1].armed) {
                        Thread.onSpinWait();
                    }
                    wakes[1].pipe.sink().write(ByteBuffer.wrap(new byte[] {1}));
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, "ringer");
            ringer.start();
            long start = System.nanoTime();
            assertEquals(0, sel.select(10_000), "the idle channel itself is not ready");
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "the ring ended the wait");
            ringer.join();
            for (CountingWake w : wakes) {
                assertFalse(w.armed, "every arm withdrawn after the rung wait");
            }
            assertEquals(0, sel.select(20));
            for (CountingWake w : wakes) {
                assertEquals(4, w.arms, "each key armed for each of the four waits");
            }
        } finally {
            for (CountingWake w : wakes) {
                if (w != null) {
                    close(w.pipe);
                }
            }
            close(jdk);
        }
    }

    /**
     * The look after each arm is the device's quiet check: a key it finds quiet is not polled (a poll
     * services the queue pair, a quiet check reads a few words), one it does not find quiet is.
     */
    @Test
    void aWaitPollsOnlyTheKeysWhoseQueuePairIsNotQuiet() throws Exception {
        SpinGovernor noSpin = new SpinGovernor(false, 0, 2, () -> -1);
        CountingWake[] wakes = new CountingWake[3];
        IdleSdpChannel[] channels = new IdleSdpChannel[wakes.length];
        try (Selector sel = new HybridSelector(new io.jsdp.SdpSelectorProvider(), SelectorProvider.provider().openSelector(),
                0, noSpin)) {
            for (int i = 0; i < wakes.length; i++) {
                wakes[i] = new CountingWake();
                wakes[i].quiet = i != 1;
                channels[i] = new IdleSdpChannel(sel.provider(), wakes[i]);
                channels[i].configureBlocking(false);
                channels[i].register(sel, SelectionKey.OP_READ);
            }
            assertEquals(0, sel.select(20)); // the registrations' own polls, and the first arms
            for (IdleSdpChannel c : channels) {
                c.polls = 0;
            }
            assertEquals(0, sel.select(20));
            assertEquals(2, wakes[0].arms, "armed for the second wait too");
            assertEquals(0, channels[0].polls, "quiet: not polled");
            assertEquals(0, channels[2].polls, "quiet: not polled");
            assertTrue(channels[1].polls >= 1, "not quiet: polled");
        } finally {
            for (CountingWake w : wakes) {
                if (w != null) {
                    close(w.pipe);
                }
            }
        }
    }

    /**
     * The peer rings one channel per wait: an arm it took without a ring is found when the selection
     * withdraws it, and that key is polled before the selection returns.
     */
    @Test
    void anArmTakenWithoutARingIsPolledAfterTheWait() throws Exception {
        SpinGovernor noSpin = new SpinGovernor(false, 0, 2, () -> -1);
        CountingWake wake = new CountingWake();
        wake.quiet = true;
        try (Selector sel = new HybridSelector(new io.jsdp.SdpSelectorProvider(), SelectorProvider.provider().openSelector(),
                0, noSpin)) {
            IdleSdpChannel ch = new IdleSdpChannel(sel.provider(), wake);
            ch.configureBlocking(false);
            ch.register(sel, SelectionKey.OP_READ);
            assertEquals(0, sel.select(20));
            ch.polls = 0;
            assertEquals(0, sel.select(20));
            assertEquals(0, ch.polls, "quiet and not taken: not polled");
            wake.taken = true;
            assertEquals(0, sel.select(20));
            assertEquals(1, ch.polls, "taken: polled once the wait ended");
        } finally {
            close(wake.pipe);
        }
    }

    private static void close(Pipe p) throws IOException {
        p.sink().close();
        p.source().close();
    }
}
