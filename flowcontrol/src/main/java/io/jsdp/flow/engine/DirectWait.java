package io.jsdp.flow.engine;

import io.jsdp.verbs.WakeChannel;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.ref.Cleaner;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;

/**
 * The kernel wait of a platform thread blocked on a connection whose queue pair has a
 * {@link WakeChannel}: one JDK selector per thread (an epoll instance and its wake-up descriptor,
 * opened at the thread's first such wait, closed when the thread is collected), in which the
 * connections' wake channels the thread waited on stay registered. The peer's write to the wake
 * channel ends the wait directly; so do {@link Selector#wakeup()} (local news: a close, an event a
 * device thread handled) and {@link Thread#interrupt()}, without closing anything.
 *
 * <p>Virtual threads do not wait here: a selection would hold their carrier. They park on the
 * connection's condition and are unparked by the thread that took the peer's doorbell from the
 * kernel, as the JDK unparks them through its poller thread for its own sockets.
 */
final class DirectWait {
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();
    private static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "jsdp-direct-wait-cleaner");
        t.setDaemon(true);
        return t;
    });
    private static final ThreadLocal<Selector> SELECTORS = new ThreadLocal<>();

    private DirectWait() {
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null; // JDK 17: no virtual threads
        }
    }

    /** Whether the current thread may wait in a selector (a platform thread). */
    static boolean mayWait() {
        if (IS_VIRTUAL == null) {
            return true;
        }
        try {
            return !(boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            return false;
        }
    }

    /**
     * The current thread's selector with {@code ch} registered for reading, or null when none can be
     * had (the channel closed, descriptors exhausted).
     */
    static Selector selectorFor(SelectableChannel ch) {
        if (ch == null) {
            return null; // not set up (yet)
        }
        Selector s = SELECTORS.get();
        try {
            if (s == null || !s.isOpen()) {
                s = open(ch.provider());
            }
            if (ch.keyFor(s) == null) {
                ch.register(s, SelectionKey.OP_READ);
            }
            return s;
        } catch (ClosedChannelException | java.nio.channels.IllegalBlockingModeException e) {
            return null;
        } catch (IOException e) {
            SdpStack.TRACE.record(io.jsdp.ras.TraceLevel.RARE, "engine.directWaitSelectorFailed", e);
            return null;
        }
    }

    private static Selector open(SelectorProvider provider) throws IOException {
        Selector s = provider.openSelector();
        SELECTORS.set(s);
        CLEANER.register(Thread.currentThread(), new Closer(s));
        return s;
    }

    /** Waits in {@code s} for at most {@code ns} (rounded up to a millisecond), then clears its selected keys. */
    static void select(Selector s, long ns) throws IOException {
        if (ns >= Long.MAX_VALUE / 4) {
            s.select();
        } else {
            s.select(Math.max(1, (ns + 999_999) / 1_000_000));
        }
        s.selectedKeys().clear();
    }

    /** Closes a collected thread's selector (holds no reference to the thread). */
    private record Closer(Selector s) implements Runnable {
        @Override
        public void run() {
            try {
                s.close();
            } catch (IOException e) {
                SdpStack.TRACE.record(io.jsdp.ras.TraceLevel.INTERNALS, "engine.directWaitCloseFailed", e);
            }
        }
    }
}
