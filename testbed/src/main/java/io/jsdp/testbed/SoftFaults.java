package io.jsdp.testbed;

import io.jsdp.verbs.CmEventType;
import java.net.InetAddress;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fault injection for one SoftRdma device. Every knob is off by default and may be turned at any time
 * from any thread; the device reads them as it works.
 *
 * <ul>
 *   <li>{@link #linkDown(boolean)}: the device's link fails; its queue pairs and their peers stop
 *       answering each other, so requests end in {@code RETRY_EXC_ERR} after the transport timeout.</li>
 *   <li>{@link #operationDelayNs(long)}: every send request waits this long between post and data
 *       movement (catches reuse of a send buffer before its completion).</li>
 *   <li>{@link #readDelayNs(long)}: RDMA READs move their data this much later, without holding up
 *       later requests, so a later unfenced SEND overtakes them (as the specification allows).</li>
 *   <li>{@link #wireLatencyNs(long)}: messages this device sends to another process (the host fabric's
 *       wires) reach the peer this long after they were posted, pipelined: a network's one-way latency,
 *       set from {@value XpEngine#WIRE_LATENCY_PROP} when the device opens.</li>
 *   <li>{@link #preemptPoster(Thread, long)}: a thread is held after each send request it posts was
 *       carried out, as a scheduler preempting it there would (on 2 busy CPUs, milliseconds), so what
 *       the request caused at the peer may come back before the poster goes on.</li>
 *   <li>{@link #dropConnectRequests(boolean)}: connect requests sent from this device are lost, so the
 *       connect ends in {@code UNREACHABLE}.</li>
 *   <li>{@link #blackhole(InetAddress)}: address resolution towards that address never answers and
 *       ends in {@code ADDR_ERROR} at its timeout.</li>
 *   <li>{@link #loseCmEvents(CmEventType, int)} / {@link #cmEventDelayNs(long)}: the next events of a
 *       type delivered to this device's channels are lost, or every event is delayed.</li>
 *   <li>{@link #memoryFault(int)}: the next service of a queue pair connected across processes throws
 *       {@code InternalError} on the servicing thread, as an access to a shared segment truncated under it
 *       does (SIGBUS, which the JVM reports so).</li>
 * </ul>
 */
public final class SoftFaults {
    private volatile boolean linkDown;
    private volatile Runnable linkListener;
    private volatile long operationDelayNs;
    private volatile long readDelayNs;
    private volatile long wireLatencyNs = XpEngine.wireLatencyDefault();
    private volatile Thread preemptedPoster;
    private volatile long preemptNs;
    private volatile boolean dropConnectRequests;
    private volatile long cmEventDelayNs;
    private final Set<InetAddress> blackholes = ConcurrentHashMap.newKeySet();
    /** Events still to lose, per type; guarded by itself. */
    private final Map<CmEventType, Integer> eventsToLose = new EnumMap<>(CmEventType.class);

    private final java.util.concurrent.atomic.AtomicInteger memoryFaultQp = new java.util.concurrent.atomic.AtomicInteger(-1);

    SoftFaults() {
    }

    /**
     * Makes the next service of queue pair {@code qpNumber} (connected to a device of the host fabric)
     * throw {@code InternalError}, once, on whichever thread services it then (the application's poll,
     * the device's progress thread): what a memory access to a truncated shared segment raises.
     *
     * @param qpNumber the queue pair's number
     * @return this
     */
    public SoftFaults memoryFault(int qpNumber) {
        memoryFaultQp.set(qpNumber);
        return this;
    }

    /** Whether the service of {@code qpNumber} must fault now (takes the fault). */
    boolean takeMemoryFault(int qpNumber) {
        return memoryFaultQp.get() == qpNumber && memoryFaultQp.compareAndSet(qpNumber, -1);
    }

    /**
     * Fails or restores the device's link.
     *
     * @param down true to fail it
     * @return this
     */
    public SoftFaults linkDown(boolean down) {
        this.linkDown = down;
        Runnable r = linkListener;
        if (r != null) {
            r.run();
        }
        return this;
    }

    /** Runs after every {@link #linkDown(boolean)} call: queue pairs on wires tell their peers at once. */
    void onLinkChange(Runnable r) {
        this.linkListener = r;
    }

    /**
     * Whether the link is down.
     *
     * @return true when failed
     */
    public boolean isLinkDown() {
        return linkDown;
    }

    /**
     * Delays the execution of every later send request.
     *
     * @param ns the delay, 0 for none
     * @return this
     */
    public SoftFaults operationDelayNs(long ns) {
        this.operationDelayNs = ns;
        return this;
    }

    /**
     * Delays the data movement of RDMA READs without holding later requests back.
     *
     * @param ns the delay, 0 for none
     * @return this
     */
    public SoftFaults readDelayNs(long ns) {
        this.readDelayNs = ns;
        return this;
    }

    /**
     * Sets the one-way latency of the host fabric's wires from this device: a message (SEND, an
     * immediate, a responder-error notice excepted) posted to a queue pair of another process is not
     * seen by the peer before this long after it was published, while later messages follow it without
     * waiting (the wire carries as many as its slots). RDMA WRITE and READ still take effect when they
     * execute, which is after every earlier message was answered, so data they place is never seen
     * before the message in front of them. The in-JVM fabric ignores it.
     *
     * @param ns the latency, 0 for none (at most {@link XpEngine#WIRE_LATENCY_MAX_NS})
     * @return this
     */
    public SoftFaults wireLatencyNs(long ns) {
        if (ns < 0 || ns > XpEngine.WIRE_LATENCY_MAX_NS) {
            throw new IllegalArgumentException("wire latency must be 0.." + XpEngine.WIRE_LATENCY_MAX_NS + " ns, is " + ns);
        }
        this.wireLatencyNs = ns;
        return this;
    }

    /**
     * Holds {@code thread} for {@code ns} after each send request it posts on this device was carried
     * out, before the post returns: the caller's next steps (a poll of its completion queue) find what
     * the peer answered meanwhile.
     *
     * @param thread the poster, or null for none
     * @param ns how long
     * @return this
     */
    public SoftFaults preemptPoster(Thread thread, long ns) {
        this.preemptNs = ns;
        this.preemptedPoster = thread;
        return this;
    }

    /**
     * Loses every connect request sent from this device.
     *
     * @param drop true to lose them
     * @return this
     */
    public SoftFaults dropConnectRequests(boolean drop) {
        this.dropConnectRequests = drop;
        return this;
    }

    /**
     * Makes address resolution towards {@code address} time out.
     *
     * @param address the address
     * @return this
     */
    public SoftFaults blackhole(InetAddress address) {
        blackholes.add(address);
        return this;
    }

    /**
     * Loses the next {@code count} events of {@code type} delivered to this device's channels.
     *
     * @param type the event type
     * @param count how many
     * @return this
     */
    public SoftFaults loseCmEvents(CmEventType type, int count) {
        synchronized (eventsToLose) {
            eventsToLose.merge(type, count, Integer::sum);
        }
        return this;
    }

    /**
     * Delays every event delivered to this device's channels.
     *
     * @param ns the delay, 0 for none
     * @return this
     */
    public SoftFaults cmEventDelayNs(long ns) {
        this.cmEventDelayNs = ns;
        return this;
    }

    /** Turns every fault off. */
    public void clear() {
        linkDown = false;
        operationDelayNs = 0;
        readDelayNs = 0;
        wireLatencyNs = 0;
        preemptedPoster = null;
        dropConnectRequests = false;
        cmEventDelayNs = 0;
        blackholes.clear();
        synchronized (eventsToLose) {
            eventsToLose.clear();
        }
    }

    long operationDelayNs() {
        return operationDelayNs;
    }

    long readDelayNs() {
        return readDelayNs;
    }

    long wireLatencyNs() {
        return wireLatencyNs;
    }

    /** After a post: holds the calling thread when it is the preempted poster. */
    void afterPost() {
        if (preemptedPoster == Thread.currentThread()) {
            long until = System.nanoTime() + preemptNs;
            for (long left = preemptNs; left > 0; left = until - System.nanoTime()) {
                java.util.concurrent.locks.LockSupport.parkNanos(left);
            }
        }
    }

    boolean dropsConnectRequests() {
        return dropConnectRequests;
    }

    boolean isBlackholed(InetAddress address) {
        return !blackholes.isEmpty() && blackholes.contains(address);
    }

    long cmEventDelayNs() {
        return cmEventDelayNs;
    }

    boolean takeLostEvent(CmEventType type) {
        synchronized (eventsToLose) {
            Integer left = eventsToLose.get(type);
            if (left == null || left <= 0) {
                return false;
            }
            eventsToLose.put(type, left - 1);
            return true;
        }
    }
}
