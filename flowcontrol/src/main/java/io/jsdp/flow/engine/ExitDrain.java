package io.jsdp.flow.engine;

import io.jsdp.ras.TraceLevel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The exit drain: a shutdown hook that keeps an exiting JVM alive, for at most
 * {@link #EXIT_DRAIN_MS_PROP}, until every connection of every open stack has delivered what TCP's
 * kernel would still deliver after the process is gone: the written data and then the DisConn, so the
 * peer reads everything, then EOF. A connection the application left open gets its DisConn as a TCP
 * socket the kernel closes at exit gets its FIN: as soon as its own written data was delivered (the
 * connections are watched together, so a peer that does not read delays only its own connection's
 * DisConn); a write another shutdown hook makes after that fails as after {@code shutdownOutput}. Over
 * TCP the kernel owns a socket once the process has closed it or died; here the connection lives in the
 * process, so without the drain a write, close and exit would cut off data still queued in the send
 * slots (docs/protocol.md §7). {@code close} itself still returns at once.
 *
 * <p>Runs only at a normal exit ({@code System.exit}, the last non-daemon thread ending, SIGTERM);
 * {@code Runtime.halt} and SIGKILL skip it, as a crash does. Connections whose other end is in this JVM
 * are skipped: both ends die together. The stack's threads are daemons, which keep running while
 * shutdown hooks do, so the drain only waits.
 */
final class ExitDrain {
    /** Property: the longest an exiting JVM waits for its connections' output to be delivered (ms, 0 = off). */
    static final String EXIT_DRAIN_MS_PROP = "jsdp.exitDrainMs";
    /** Default of {@link #EXIT_DRAIN_MS_PROP}: 10 s. */
    static final long EXIT_DRAIN_MS_DEFAULT = 10_000;

    /** How often the drain looks at its connections (each look takes their completions). */
    private static final long POLL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final byte DATA = 0;
    private static final byte FIN = 1;
    private static final byte DONE = 2;

    private static final Set<SdpStack> STACKS = ConcurrentHashMap.newKeySet();
    private static boolean hooked; // guarded by STACKS

    private ExitDrain() {
    }

    /** A stack opened: the hook is installed with the first one. */
    static void add(SdpStack stack) {
        STACKS.add(stack);
        synchronized (STACKS) {
            if (hooked) {
                return;
            }
            hooked = true;
        }
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(ExitDrain::drain, "jsdp-exit-drain"));
        } catch (IllegalStateException exiting) {
            // the JVM is already exiting: nothing to hook into
        }
    }

    /** A stack closed: its connections are released, nothing left to drain. */
    static void remove(SdpStack stack) {
        STACKS.remove(stack);
    }

    /**
     * {@link #EXIT_DRAIN_MS_PROP}, read with the other SDP engine properties ({@link SdpOptions}): a stack
     * asks for it when it opens, so a bad value fails there, not silently inside the shutdown hook.
     *
     * @return the bound in ms
     * @throws ExceptionInInitializerError (caused by an {@link IllegalArgumentException} naming the
     *     property) when an engine property is bad, as for the others
     */
    static long configuredMs() {
        return SdpOptions.SYSTEM_EXIT_DRAIN_MS;
    }

    private static void drain() {
        drain(configuredMs());
    }

    /**
     * Drains every open stack's connections to peers outside this JVM, for at most {@code ms}. All are
     * watched together: each open one gets its DisConn as soon as its own written data is delivered, so a
     * peer that does not read holds back only its own connection, not the others' DisConns.
     *
     * @param ms the bound; 0 does nothing
     * @return the connections whose output the bound cut off
     */
    static int drain(long ms) {
        if (ms == 0) {
            return 0;
        }
        List<SdpConnection> all = new ArrayList<>();
        for (SdpStack s : STACKS) {
            all.addAll(s.connections());
        }
        Set<String> ends = new HashSet<>();
        for (SdpConnection c : all) {
            ends.add(pair(c.localAddress(), c.remoteAddress()));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        List<SdpConnection> remote = new ArrayList<>();
        for (SdpConnection c : all) {
            if (!ends.contains(pair(c.remoteAddress(), c.localAddress()))) {
                remote.add(c); // else the other end is in this JVM: it ends with us
            }
        }
        return drain(remote, deadline, ms);
    }

    /**
     * Drains these connections until {@code deadline}.
     *
     * @param remote connections whose peers outlive this JVM
     * @param deadline {@link System#nanoTime()} to give up at
     * @param ms the bound, for the log
     * @return the connections whose output the bound cut off
     */
    static int drain(List<SdpConnection> remote, long deadline, long ms) {
        // per connection: DATA (its written data on the way), FIN (DisConn asked for), DONE
        byte[] phase = new byte[remote.size()];
        int left = remote.size();
        while (left > 0) {
            for (int i = 0; i < phase.length; i++) {
                SdpConnection c = remote.get(i);
                if (phase[i] == DATA && c.exitDrainDone()) {
                    c.shutdownOutputAtExit(); // the written data is delivered: the FIN the kernel would send
                    phase[i] = FIN;
                }
                if (phase[i] == FIN && c.exitDrainDone()) {
                    phase[i] = DONE;
                    left--;
                }
            }
            if (left == 0 || System.nanoTime() - deadline >= 0) {
                break;
            }
            LockSupport.parkNanos(POLL_NS);
            if (Thread.interrupted()) {
                break; // the JVM is being torn down some other way: stop waiting
            }
        }
        int cut = 0;
        for (int i = 0; i < phase.length; i++) {
            if (phase[i] != DONE) {
                cut++;
                SdpStack.TRACE.message(TraceLevel.ERROR, "stack.exitDrain", "connection " + remote.get(i).id()
                    + ": output not delivered within " + EXIT_DRAIN_MS_PROP + "=" + ms + " ms of JVM exit; the peer sees a reset");
            }
        }
        if (cut == 0 && !remote.isEmpty()) {
            SdpStack.TRACE.message(TraceLevel.RARE, "stack.exitDrain", remote.size() + " connection(s) drained at JVM exit");
        }
        return cut;
    }

    private static String pair(InetSocketAddress a, InetSocketAddress b) {
        return end(a) + ">" + end(b); // by IP and port: one side's address may carry a host name, the other not
    }

    private static String end(InetSocketAddress a) {
        if (a == null) {
            return "?";
        }
        return (a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress()) + ":" + a.getPort();
    }
}
