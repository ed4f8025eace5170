package io.jsdp.flow.engine;

import io.jsdp.flow.engine.SdpConnection.ConnectionStats;
import io.jsdp.verbs.QueuePair;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The totals of one {@link SdpStack}'s connections: counts of opened, established, failed and released
 * connections, and the counters of released connections summed, so that {@link SdpStack#totals()} —
 * those sums plus the live connections' own counters — covers every connection the stack ever had.
 *
 * <p>The counters of a live connection stay with the connection (plain fields under its lock, nothing
 * shared on the data path); they are added here once, when it releases its resources. A total is then
 * read as a seqlock: copy the released sums, add the live connections, and retry when a release
 * happened meanwhile (it would be counted twice or not at all).
 */
public final class StackStatistics {
    private static final Failure[] FAILURES = Failure.values();

    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong established = new AtomicLong();
    private final AtomicLongArray failures = new AtomicLongArray(FAILURES.length);

    // ---- guarded by lock; generation changes with every release
    private final Object lock = new Object();
    private long generation;
    private final long[] releasedSums = new long[SUMS];

    private static final int RELEASED = 0;
    private static final int BYTES_SENT = 1;
    private static final int BYTES_RECEIVED = 2;
    private static final int MESSAGES_SENT = 3;
    private static final int MESSAGES_RECEIVED = 4;
    private static final int CREDIT_STALLS = 5;
    private static final int CREDIT_STALL_NS = 6;
    private static final int ZERO_COPY = 7;
    private static final int RNR_RETRIES = 8;
    /** Connections whose device does not count RNR retries: the total is then "not available". */
    private static final int RNR_NOT_COUNTED = 9;
    private static final int SUMS = 10;

    StackStatistics() {
    }

    void onOpened() {
        opened.incrementAndGet();
    }

    void onEstablished() {
        established.incrementAndGet();
    }

    void onFailed(Failure f) {
        failures.incrementAndGet(f.ordinal());
    }

    /** Called once per connection, under its lock, with its final counters. */
    void onReleased(ConnectionStats s) {
        synchronized (lock) {
            generation++;
            releasedSums[RELEASED]++;
            add(releasedSums, s);
        }
    }

    private static void add(long[] sums, ConnectionStats s) {
        sums[BYTES_SENT] += s.bytesSent();
        sums[BYTES_RECEIVED] += s.bytesReceived();
        sums[MESSAGES_SENT] += s.messagesSent();
        sums[MESSAGES_RECEIVED] += s.messagesReceived();
        sums[CREDIT_STALLS] += s.creditStalls();
        sums[CREDIT_STALL_NS] += s.creditStallNs();
        sums[ZERO_COPY] += s.zeroCopyTransfers();
        if (s.rnrRetries() == QueuePair.RNR_RETRIES_NOT_AVAILABLE) {
            sums[RNR_NOT_COUNTED]++;
        } else {
            sums[RNR_RETRIES] += s.rnrRetries();
        }
    }

    /** The released sums plus the live connections' counters, consistent with respect to releases. */
    Totals totals(Collection<SdpConnection> connections) {
        long[] sums = new long[SUMS];
        long live = 0;
        for (int attempt = 0;; attempt++) {
            long gen;
            synchronized (lock) {
                gen = generation;
                System.arraycopy(releasedSums, 0, sums, 0, SUMS);
            }
            live = 0;
            for (SdpConnection c : connections) {
                ConnectionStats s = c.stats();
                if (!s.released()) {
                    live++;
                    add(sums, s);
                }
            }
            synchronized (lock) {
                if (gen == generation || attempt == 10) {
                    break; // after ten tries under a storm of closes, a total off by a few connections
                }
            }
        }
        Map<String, Long> byFailure = new LinkedHashMap<>();
        for (Failure f : FAILURES) {
            long n = failures.get(f.ordinal());
            if (n != 0) {
                byFailure.put(f.name(), n);
            }
        }
        return new Totals(opened.get(), established.get(), sums[RELEASED], live, sums[BYTES_SENT], sums[BYTES_RECEIVED],
            sums[MESSAGES_SENT], sums[MESSAGES_RECEIVED], sums[CREDIT_STALLS], sums[CREDIT_STALL_NS], sums[ZERO_COPY],
            sums[RNR_NOT_COUNTED] != 0 ? QueuePair.RNR_RETRIES_NOT_AVAILABLE : sums[RNR_RETRIES], Map.copyOf(byFailure));
    }

    /**
     * Every connection of a stack, live and released, summed.
     *
     * @param opened connections created (connecting or accepted)
     * @param established connections that completed the handshake
     * @param released connections whose resources are freed
     * @param live connections not released yet
     * @param bytesSent payload bytes posted
     * @param bytesReceived payload bytes received
     * @param messagesSent SDP messages posted, control messages included
     * @param messagesReceived SDP messages received
     * @param creditStalls writer stalls for want of credits or send slots
     * @param creditStallNs time spent in those stalls
     * @param zeroCopyTransfers zero-copy transfers (SrcAvail writes the peer read completely, issue 9)
     * @param rnrRetries receiver-not-ready retries of the connections' queue pairs, or
     *     {@link QueuePair#RNR_RETRIES_NOT_AVAILABLE} when a connection's device does not count them
     * @param failures failed connections by {@link Failure} name (absent: none)
     */
    public record Totals(long opened, long established, long released, long live, long bytesSent, long bytesReceived,
                         long messagesSent, long messagesReceived, long creditStalls, long creditStallNs,
                         long zeroCopyTransfers, long rnrRetries, Map<String, Long> failures) {
    }
}
