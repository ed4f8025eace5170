package io.jsdp.testbed;

import io.jsdp.ras.TraceLevel;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.SharedSegment;
import io.jsdp.testbed.shm.ShmNode;
import io.jsdp.testbed.shm.WaitWord;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A host-fabric device's side of the queue pairs it has connected to other processes: its shared
 * segment (doorbell word and {@link KeyTable}), the peer memory it has mapped, and its progress
 * thread.
 *
 * <h2>Who moves messages across processes</h2>
 * A requester publishes a message in its {@link Wire}; the responder's process acts on it when one of
 * its threads looks: a poll of the receiving queue pair's completion queue, a post of a receive, or
 * this progress thread. Answers travel back the same way: a poll of the requester's send completion
 * queue, a post, or the requester's progress thread turns them into completions. While the
 * application polls a queue pair's completion queues, nobody else needs to look, and no doorbell is
 * rung: the fast path is memory only.
 *
 * <p>The progress thread covers what nobody polls. Every {@link #CHECK_NS} while a requester timer
 * runs, else every {@link #IDLE_NS}, and when woken (at once when a completion queue is armed, or by
 * a peer's requester whose message waits unanswered), it finds the queue pairs whose completion queues were not polled since
 * its last look, or are armed, and for those sets the "wants a doorbell" words in the wires; then it
 * looks once more at every queue pair (so nothing published before the word was set is missed) and
 * waits on the device's doorbell word, which a peer rings only when a wire says so (a Dekker pair:
 * the peer publishes and then reads the word; the thread sets the word and then looks). It also runs
 * the requesters' RNR and transport timers of messages already in a wire.
 */
final class XpEngine {
    /** Property: bytes of a wire's data area, where messages longer than a slot's inline space travel. */
    static final String WIRE_BYTES_PROP = "jsdp.soft.wireBytes";
    /** Default data area: 1 MiB, several SDP buffers in flight. */
    static final int WIRE_BYTES_DEFAULT = 1 << 20;
    private static final int WIRE_BYTES = wireBytesProperty();

    /**
     * How often the progress thread re-evaluates who polls, and runs the requesters' timers while a
     * message waits on a timer (RNR-marked, or its responder silent).
     */
    static final long CHECK_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * How long the progress thread waits on the doorbell when no timer runs: doorbells end the wait,
     * so an idle device wakes 50 times a second, not 1000, and a device whose pollers spin is not
     * interrupted more often either.
     */
    static final long IDLE_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * Property: how long the progress thread first waits before it looks again at a queue pair whose lock
     * another thread held (doubling, up to {@link #CHECK_NS}, while it keeps finding one held).
     */
    static final String CONTENDED_WAIT_NS_PROP = "jsdp.soft.contendedWaitNs";
    /**
     * 50 µs: the lock's holder (mostly an application polling its queue) does the work itself or is
     * done soon. Looking again at once (0) spun the thread on the lock of every polling application.
     */
    static final long CONTENDED_WAIT_NS_DEFAULT = TimeUnit.MICROSECONDS.toNanos(50);
    private static final long CONTENDED_NS = contendedWaitProperty();

    /**
     * Property: the one-way latency, in nanoseconds, of the wires from this process's devices (the
     * initial {@link SoftFaults#wireLatencyNs(long)}); 0, the default, for none.
     */
    static final String WIRE_LATENCY_PROP = "jsdp.soft.wireLatencyNs";
    /** The largest wire latency: 100 ms (a wire's arrival stamp is 32 bits of nanoseconds). */
    static final long WIRE_LATENCY_MAX_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long WIRE_LATENCY = longProperty(WIRE_LATENCY_PROP, 0, 0, WIRE_LATENCY_MAX_NS);
    /**
     * Property: whether this process's shm node thread, which takes a peer's doorbell from the kernel,
     * serves the device's queue pairs itself and hands the completion events it finds to their
     * handlers ({@link #serviceOnNodeThread}); false leaves all of it to the progress thread it wakes.
     */
    static final String NODE_THREAD_SERVICE_PROP = "jsdp.soft.nodeThreadService";
    /** On: a waiting reader, writer or selector is the second thread a peer's doorbell wakes, not the fourth. */
    static final boolean NODE_THREAD_SERVICE_DEFAULT = true;
    private static final boolean NODE_THREAD_SERVICE = booleanProperty(NODE_THREAD_SERVICE_PROP,
        NODE_THREAD_SERVICE_DEFAULT);
    /**
     * Property: whether linked queue pairs get a direct doorbell ({@link DirectDoorbell}), through which
     * a peer wakes the waiting thread or selector itself rather than this process's node thread.
     */
    static final String DIRECT_DOORBELL_PROP = "jsdp.soft.directDoorbell";
    static final boolean DIRECT_DOORBELL = booleanProperty(DIRECT_DOORBELL_PROP, true);
    /** Every engine of this process, for the node's direct-doorbell handler (queue-pair numbers are per device). */
    private static final CopyOnWriteArrayList<XpEngine> ENGINES = new CopyOnWriteArrayList<>();
    /**
     * How often the node thread looks again when the doorbell's sequence moved during its look, before
     * it leaves the rest to the progress thread: a peer streaming without pause keeps it moving.
     */
    private static final int NODE_THREAD_LOOKS = 4;
    /**
     * The longest wait for a message on its way that the progress thread spends polling rather than
     * parked: 100 µs, twice the kernel's default timer slack, by which a park of a few microseconds
     * oversleeps.
     */
    static final long ARRIVAL_SPIN_MAX_NS = TimeUnit.MICROSECONDS.toNanos(100);

    /**
     * The host-fabric devices of this process, by the name of their device segment: a queue pair whose
     * peer turns out to be in this process reaches the peer's memory regions directly, not only its
     * device memory (the name includes the node's token, so a reopened node never aliases).
     */
    private static final ConcurrentHashMap<String, SoftDevice> IN_PROCESS = new ConcurrentHashMap<>();

    private final SoftDevice device;
    private final ShmNode node;
    private final SharedSegment segment;
    private final long segmentNumber;
    final KeyTable keys;
    private final WaitWord doorbell;
    private final CopyOnWriteArrayList<SoftQueuePair> qps = new CopyOnWriteArrayList<>();
    /**
     * The same queue pairs by number, for a doorbell whose ringer named the one it wrote to: replaced
     * whole on add and remove (rare), looked up by the node thread per doorbell without allocating.
     */
    private volatile ByNumber byNumber = new ByNumber(new int[0], new SoftQueuePair[0]);
    /** Node-thread looks at one queue pair (the ringer's hint) and at all of them: for tests. */
    private final java.util.concurrent.atomic.AtomicLong hintedLooks = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong fullLooks = new java.util.concurrent.atomic.AtomicLong();
    /** Peer segments this device mapped (device memory, wires, device segments), by file name. */
    private final ConcurrentHashMap<String, SharedSegment> peerSegments = new ConcurrentHashMap<>();
    /** Links to each peer process. */
    private final ConcurrentHashMap<NodeId, Integer> links = new ConcurrentHashMap<>();
    /** Per peer process linked: the waits of it rung lately ({@link RingMemo}). */
    private final ConcurrentHashMap<NodeId, RingMemo> ringMemos = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;
    /** Set when a completion queue is armed, so the thread re-evaluates at once. */
    private volatile boolean recheck;

    XpEngine(SoftDevice device, ShmNode node) throws IOException {
        this.device = device;
        this.node = node;
        this.segment = node.createSegment(KeyTable.SEGMENT_BYTES);
        this.segmentNumber = numberOf(segment);
        this.keys = new KeyTable(segment.buffer());
        this.doorbell = WaitWord.at(node, segment, 0);
        IN_PROCESS.put(segment.name(), device);
        ENGINES.add(this);
        node.setDirectHandler(XpEngine::onDirect);
        this.thread = new Thread(this::run, "jsdp-" + device.name() + "-progress");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private static int wireBytesProperty() {
        return (int) longProperty(WIRE_BYTES_PROP, WIRE_BYTES_DEFAULT, 4096, 1 << 30);
    }

    private static long contendedWaitProperty() {
        return longProperty(CONTENDED_WAIT_NS_PROP, CONTENDED_WAIT_NS_DEFAULT, 0, CHECK_NS);
    }

    /** A system property's {@code true} or {@code false}; its default when unset or blank. */
    private static boolean booleanProperty(String name, boolean defaultValue) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        switch (v.trim()) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException(name + " must be true or false, is '" + v + "'");
        }
    }

    /** A system property's integer value within {@code min..max}; its default when unset or blank. */
    private static long longProperty(String name, long defaultValue, long min, long max) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, is '" + v + "'", e);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(name + " must be " + min + ".." + max + ", is " + n);
        }
        return n;
    }

    /** The wire latency new devices start with ({@code jsdp.soft.wireLatencyNs}). */
    static long wireLatencyDefault() {
        return WIRE_LATENCY;
    }

    /** The data area of new wires ({@code jsdp.soft.wireBytes}). */
    static int wireBytes() {
        return WIRE_BYTES;
    }

    /** The number in a segment's name {@code seg-<token>-<n>}. */
    static long numberOf(SharedSegment s) {
        String n = s.name();
        return Long.parseLong(n.substring(n.lastIndexOf('-') + 1));
    }

    long segmentNumber() {
        return segmentNumber;
    }

    ShmNode node() {
        return node;
    }

    /**
     * Maps segment {@code number} of {@code owner}, once per device.
     *
     * @throws IOException when it does not exist (freed, or the owner is gone)
     */
    SharedSegment peerSegment(NodeId owner, long number) throws IOException {
        String name = node.segmentName(owner, number);
        SharedSegment s = peerSegments.get(name);
        if (s == null) {
            s = node.openSegment(name);
            SharedSegment raced = peerSegments.putIfAbsent(name, s);
            if (raced != null) {
                s = raced;
            }
        }
        return s;
    }

    /** Peer segments mapped now; for tests. */
    int mappedPeerSegments() {
        return peerSegments.size();
    }

    /** Forgets the mappings of a peer process's segments (it has no link left). */
    void forgetPeer(NodeId owner) {
        String prefix = node.segmentName(owner, 0);
        String stem = prefix.substring(0, prefix.length() - 1);
        peerSegments.keySet().removeIf(n -> n.startsWith(stem));
    }

    /** The peer device's doorbell word, in its device segment. */
    WaitWord peerDoorbell(NodeId owner, long deviceSegment) throws IOException {
        return WaitWord.at(node, peerSegment(owner, deviceSegment), 0);
    }

    void add(SoftQueuePair qp, XpLink l) {
        qps.addIfAbsent(qp);
        updateByNumber();
        links.merge(l.peerNode, 1, Integer::sum);
        l.ringMemo = ringMemos.computeIfAbsent(l.peerNode, n -> new RingMemo());
        armed();
    }

    /**
     * A queue pair unlinked: its peer's wire is unmapped (once unreachable), and everything mapped of
     * that peer once no link to it is left, so closed connections do not pin shared memory.
     */
    void remove(SoftQueuePair qp, XpLink l) {
        qps.remove(qp);
        updateByNumber();
        peerSegments.remove(l.rxSegmentName);
        if (links.merge(l.peerNode, -1, Integer::sum) <= 0) {
            links.remove(l.peerNode);
            ringMemos.remove(l.peerNode);
            forgetPeer(l.peerNode);
        }
    }

    /**
     * The device's link went down or came back: each queue pair on a wire says at once whether it
     * answers, so a peer's next request sees it (not only after the progress thread's next look).
     */
    void linkChanged() {
        for (SoftQueuePair q : qps) {
            q.xpLinkChanged();
        }
        armed();
    }

    /** A completion queue with queue pairs across processes was armed (or a link added): look again now. */
    void armed() {
        recheck = true;
        // The thread parks either on the doorbell word (a role uncovered) or plainly (all covered, where
        // a doorbell rings nobody): end either wait, or an arm would wait out the idle sleep unseen.
        LockSupport.unpark(thread);
        doorbell.wake();
    }

    /** The node's handler of direct doorbells peers open: the queue pair named, on any engine of its node. */
    private static boolean onDirect(NodeId peer, int targetQp, int sourceQp, java.nio.channels.SocketChannel ch) {
        for (XpEngine e : ENGINES) {
            SoftQueuePair q = e.byNumber.get(targetQp);
            if (q != null && q.takeDirect(peer, sourceQp, ch)) {
                return true;
            }
        }
        return false;
    }

    void close() {
        ENGINES.remove(this);
        running = false;
        LockSupport.unpark(thread);
        doorbell.wake();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        IN_PROCESS.remove(segment.name(), device);
        node.deleteSegment(segment);
        peerSegments.clear();
    }

    /**
     * The device of this process whose device segment is {@code deviceSegment} of {@code owner}, or null
     * when {@code owner} is another process (or the device is closed).
     */
    SoftDevice inProcessPeer(NodeId owner, long deviceSegment) {
        return owner.equals(node.id()) ? IN_PROCESS.get(node.segmentName(owner, deviceSegment)) : null;
    }

    // ------------------------------------------------------------------ progress thread

    private void run() {
        doorbell.bindWaiter();
        if (NODE_THREAD_SERVICE) {
            doorbell.onPeerDoorbell(this::serviceOnNodeThread);
        }
        InlineDispatch inline = InlineDispatch.enter();
        long nextCheck = 0;
        boolean covered = true;
        boolean timing = false;
        long contendedWait = CONTENDED_NS;
        try {
            while (running) {
                long observed = doorbell.sequence();
                int service = serviceAll();
                long now = System.nanoTime();
                if (recheck || now - nextCheck >= 0) {
                    recheck = false;
                    nextCheck = now + CHECK_NS;
                    covered = true;
                    timing = false;
                    for (SoftQueuePair q : qps) {
                        try {
                            timing |= q.xpTimers(now);
                            covered &= q.xpCoverage();
                        } catch (RuntimeException | InternalError e) {
                            failed(q, e);
                        }
                    }
                    if (!covered) {
                        // The words are set: look once more before waiting (Dekker with the publishers).
                        service |= serviceAll();
                    }
                }
                inline.flush(); // the events found, to their handlers, holding no lock now
                if ((service & SoftQueuePair.SERVICE_FOUND) != 0) {
                    contendedWait = CONTENDED_NS;
                    continue;
                }
                if ((service & SoftQueuePair.SERVICE_CONTENDED) != 0 && CONTENDED_NS == 0) {
                    continue; // configured to look again at once
                }
                if (qps.isEmpty()) {
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
                } else {
                    // Covered or not, wait on the doorbell word: peers ring it when a wire asks, and a
                    // requester whose message lingers unanswered rings it anyway (XpLink.nudge), so a
                    // poller here that stopped without arming does not leave it waiting for our next look.
                    // A role skipped for its lock: its holder is running it or will be done soon; look
                    // again after a short wait (or at a doorbell), not at once and not after IDLE_NS. The
                    // wait doubles, up to CHECK_NS, while every look finds a lock held: an application
                    // that keeps polling keeps its queue served.
                    long wait;
                    if ((service & SoftQueuePair.SERVICE_CONTENDED) != 0) {
                        wait = contendedWait;
                        contendedWait = Math.min(2 * contendedWait, CHECK_NS);
                    } else {
                        wait = timing ? CHECK_NS : IDLE_NS;
                        contendedWait = CONTENDED_NS;
                    }
                    if ((service & SoftQueuePair.SERVICE_ARRIVING) != 0) {
                        // a message on a wire with latency: look again when it arrives
                        long arrival = arrivalWait();
                        if (arrival <= ARRIVAL_SPIN_MAX_NS) {
                            awaitArrival(observed, arrival);
                            continue;
                        }
                        wait = Math.min(wait, arrival);
                    }
                    long r = doorbell.await(observed, wait);
                    if (r == WaitWord.CLOSED) {
                        return;
                    }
                }
            }
        } catch (RuntimeException | Error e) {
            SoftDevice.TRACE.record(TraceLevel.ERROR, "device.progressFailure", e);
            throw e;
        } finally {
            inline.exit();
            doorbell.unbindWaiter();
        }
    }

    /**
     * A peer's doorbell, run on this process's shm node thread, which took it from the kernel, in place
     * of the progress thread: it serves the queue pairs itself (only the one the ringer named, when its
     * ring is the only wake since the word was armed: {@link WaitWord#soleWakeSinceArm}) and hands the completion events it finds
     * straight to their handlers, so the engine's waiting reader, writer or selector is the next thread
     * woken, not the third after the progress thread and the stack's (issue 27). Then it re-arms the
     * doorbell word on the progress thread's behalf ({@link WaitWord#rearm}), so the progress thread
     * sleeps on: no thread but the node thread and the waiter runs for a message. It leaves to the
     * progress thread (and wakes it) what it cannot finish: a queue pair whose lock another thread held,
     * a message still on its way over an emulated latency, or a sequence that keeps moving while it
     * looks. The progress thread's other duties (who polls, the timers) keep their own wake-ups.
     *
     * @param hint the number of the queue pair the ringer wrote to, or {@link WaitWord#NO_HINT}
     * @return true when the progress thread need not wake
     */
    private boolean serviceOnNodeThread(int hint) {
        if (!running) {
            return false;
        }
        InlineDispatch inline = InlineDispatch.enter();
        try {
            for (int look = 0; look < NODE_THREAD_LOOKS; look++) {
                long observed = doorbell.sequence();
                // the ringer named the queue pair it wrote to; when its wake is the only one since the
                // word was armed, nothing else was published for us to find: look at that one alone
                SoftQueuePair q = look == 0 && hint != WaitWord.NO_HINT && doorbell.soleWakeSinceArm(observed)
                    ? byNumber.get(hint) : null;
                int service;
                if (q != null) {
                    hintedLooks.incrementAndGet();
                    service = serviceOne(q);
                } else {
                    fullLooks.incrementAndGet();
                    service = serviceAll();
                }
                inline.flush(); // the events found, to their handlers (the engine), holding no lock now
                if ((service & (SoftQueuePair.SERVICE_CONTENDED | SoftQueuePair.SERVICE_ARRIVING)) != 0) {
                    return false;
                }
                if (doorbell.rearm(observed)) {
                    return true;
                }
                // a waker moved the sequence while we looked and may have found the word unarmed: look again
            }
            return false;
        } finally {
            inline.exit();
        }
    }

    /**
     * Node-thread looks at the one queue pair a ringer named, and at every queue pair.
     *
     * @return {hinted, full}
     */
    long[] nodeThreadLooks() {
        return new long[] {hintedLooks.get(), fullLooks.get()};
    }

    /**
     * Polls the doorbell word until a message on its way arrives ({@code ns} from now) or a doorbell
     * rings: a park that short oversleeps by the kernel's timer slack (about 50 µs), far more than the
     * latency it waits out.
     */
    private void awaitArrival(long observed, long ns) {
        long end = System.nanoTime() + ns;
        while (System.nanoTime() - end < 0 && doorbell.sequence() == observed && running) {
            Thread.onSpinWait();
        }
    }

    /**
     * The nearest arrival of a message still on its way to one of our queue pairs (at least 1 ns). Called
     * after a look found one on its way: when none is any more, it arrived since, and the answer is 1 ns
     * (look again at once), not a wait as long as an idle one.
     */
    private long arrivalWait() {
        long wait = Long.MAX_VALUE;
        for (SoftQueuePair q : qps) {
            long n = q.xpArrivesInNs();
            if (n > 0) {
                wait = Math.min(wait, n);
            }
        }
        return wait == Long.MAX_VALUE ? 1 : wait;
    }

    /** Rebuilds {@link #byNumber} from {@link #qps}; the add and remove paths call it, rarely. */
    private synchronized void updateByNumber() {
        SoftQueuePair[] all = qps.toArray(new SoftQueuePair[0]);
        java.util.Arrays.sort(all, java.util.Comparator.comparingInt(SoftQueuePair::qpNumber));
        int[] numbers = new int[all.length];
        for (int i = 0; i < all.length; i++) {
            numbers[i] = all[i].qpNumber();
        }
        byNumber = new ByNumber(numbers, all);
    }

    /** Queue pairs sorted by number, with their numbers beside them. */
    private record ByNumber(int[] numbers, SoftQueuePair[] pairs) {
        SoftQueuePair get(int number) {
            int i = java.util.Arrays.binarySearch(numbers, number);
            return i < 0 ? null : pairs[i];
        }
    }

    private int serviceAll() {
        int did = 0;
        for (SoftQueuePair q : qps) {
            did |= serviceOne(q);
        }
        return did;
    }

    private int serviceOne(SoftQueuePair q) {
        try {
            return q.xpService(null);
        } catch (RuntimeException | InternalError e) {
            failed(q, e);
            return 0;
        }
    }

    /**
     * A queue pair's service threw (a bug, or a peer segment gone bad under us: a truncated mapping
     * raises InternalError): that queue pair goes to ERROR, the thread goes on for the others.
     */
    private void failed(SoftQueuePair q, Throwable e) {
        SoftDevice.TRACE.record(TraceLevel.ERROR, "device.progressFailure", e);
        qps.remove(q); // its mappings go when the queue pair unlinks
        updateByNumber();
        try {
            q.enterError("progress failure");
        } catch (RuntimeException | InternalError again) {
            SoftDevice.TRACE.record(TraceLevel.ERROR, "device.progressFailure", again);
        }
    }

    @Override
    public String toString() {
        return "XpEngine[" + device.name() + ", " + qps.size() + " queue pairs]";
    }
}
