package io.jsdp.provider;

import io.jsdp.SdpSocketInfo;
import io.jsdp.flow.events.FallbackEvent;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The provider's live sockets, for {@code jsdp.jar stat}: every {@link SdpSocketChannel} (SDP or TCP,
 * also those under {@link SdpSocketImpl}) and {@link SdpServerSocketChannel}, added when created and
 * removed when closed. Entries are weak, so a channel the application drops without closing is still
 * collected (and its entry purged); the registry never keeps a socket alive. Also the provider's
 * counters: fallbacks by reason and TCP bytes, which only the provider sees.
 */
final class SocketRegistry {
    private static final AtomicLong IDS = new AtomicLong();
    private static final ConcurrentHashMap<Long, Entry> LIVE = new ConcurrentHashMap<>();
    private static final ReferenceQueue<Object> COLLECTED = new ReferenceQueue<>();
    private static final Fallback[] FALLBACK_KINDS = Fallback.values();
    private static final AtomicLongArray FALLBACKS = new AtomicLongArray(FALLBACK_KINDS.length);
    /** TCP payload bytes of every fallback connection: the TCP path makes a system call anyway. */
    private static final LongAdder TCP_SENT = new LongAdder();
    private static final LongAdder TCP_RECEIVED = new LongAdder();

    private SocketRegistry() {
    }

    private static final class Entry extends WeakReference<Object> {
        final long id;

        Entry(Object socket, long id) {
            super(socket, COLLECTED);
            this.id = id;
        }
    }

    /** Lists a new socket, an {@link SdpSocketChannel} or {@link SdpServerSocketChannel}; returns its id. */
    static long add(Object socket) {
        for (Reference<?> r; (r = COLLECTED.poll()) != null;) {
            LIVE.remove(((Entry) r).id);
        }
        long id = IDS.incrementAndGet();
        LIVE.put(id, new Entry(socket, id));
        SdpManagement.ensureRegistered();
        return id;
    }

    /** The socket closed. */
    static void remove(long id) {
        LIVE.remove(id);
    }

    /** How many sockets are listed (open, or dropped unclosed and not collected yet). */
    static int size() {
        return LIVE.size();
    }

    /** The listed sockets' descriptions, by id. */
    static List<SdpSocketInfo> describeAll() {
        List<SdpSocketInfo> out = new ArrayList<>();
        for (Entry e : LIVE.values()) {
            Object s = e.get();
            SdpSocketInfo i = null;
            if (s instanceof SdpSocketChannel c) {
                i = c.describe(e.id);
            } else if (s instanceof SdpServerSocketChannel l) {
                i = l.describe(e.id);
            } else {
                LIVE.remove(e.id); // collected
            }
            if (i != null) {
                out.add(i);
            }
        }
        out.sort(Comparator.comparingLong(SdpSocketInfo::getId));
        return out;
    }

    /** A stream connection goes to TCP: counted by kind, and a JFR event when recording. */
    static void onFallback(String reason, InetSocketAddress address) {
        Fallback f = Fallback.of(reason);
        FALLBACKS.incrementAndGet(f.ordinal());
        FallbackEvent e = new FallbackEvent();
        if (e.shouldCommit()) {
            e.kind = f.key();
            e.reason = reason;
            e.address = endpoint(address);
            e.commit();
        }
    }

    static Map<String, Long> fallbacks() {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Fallback f : FALLBACK_KINDS) {
            long n = FALLBACKS.get(f.ordinal());
            if (n != 0) {
                out.put(f.key(), n);
            }
        }
        return out;
    }

    static void onTcpSent(long n) {
        TCP_SENT.add(n);
    }

    static void onTcpReceived(long n) {
        TCP_RECEIVED.add(n);
    }

    static long tcpSent() {
        return TCP_SENT.sum();
    }

    static long tcpReceived() {
        return TCP_RECEIVED.sum();
    }

    /** {@code address:port} ({@code [v6]:port}, {@code *:port} for the wildcard address), or empty. */
    static String endpoint(InetSocketAddress a) {
        if (a == null) {
            return "";
        }
        if (a.isUnresolved() || a.getAddress() == null) {
            return a.getHostString() + ":" + a.getPort();
        }
        if (a.getAddress().isAnyLocalAddress()) {
            return "*:" + a.getPort();
        }
        String host = a.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
