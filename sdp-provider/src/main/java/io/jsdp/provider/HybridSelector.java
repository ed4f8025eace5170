package io.jsdp.provider;

import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SpinGovernor;
import io.jsdp.flow.engine.SpinWindow;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.AbstractSet;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The provider's selector: one selector for jsdp's channels and the JDK's own (datagram, pipe,
 * Unix-domain, inherited, and TCP fallback channels), because Netty, Jetty and the JDK's HttpClient
 * register every kind with one selector ({@code java-nio-provider.md} §1.3, §2.1).
 *
 * <p>JDK channels are registered, with the same interest set, in an inner JDK selector, whose keys
 * carry ours as attachment; every selection waits in that inner selector, so {@link #wakeup()},
 * interrupts and JDK readiness all end the wait there. The semantics are the JDK's: cancelled keys
 * are flushed before and after each selection, a key already selected has its ready set OR-ed and a
 * new one replaced, the count is the number of keys whose ready sets changed, {@link #keys()} is a
 * live unmodifiable view, {@link #selectedKeys()} supports removal but not addition, and
 * {@code register} never blocks, even while another thread selects (it takes effect at the next
 * selection, as with the JDK).
 *
 * <p>A jsdp channel's SDP side is not a file descriptor: its key is put on a signalled list when its
 * readiness may have changed (the engine's readiness listener, an accept, an interest change, the
 * registration), and a selection polls only those keys and the ones it found ready the last time —
 * readiness is level-triggered, so a key stays on that list while it is ready. A selection thus costs
 * O(ready keys + the inner selector's work), not O(keys); it takes the inner selector's ready keys
 * through {@link Selector#selectNow(java.util.function.Consumer)} and allocates nothing itself but the
 * selected-key set's entry for a newly selected key, as the JDK's selector does.
 *
 * <p>Locking as in {@code sun.nio.ch.SelectorImpl}: a selection holds this selector's monitor, then
 * the selected-key set's, the order {@link Selector#select(java.util.function.Consumer)} uses too.
 */
final class HybridSelector extends AbstractSelector {
    private final Selector inner;
    private final Set<HybridKey> keys = ConcurrentHashMap.newKeySet();
    private final Set<SelectionKey> publicKeys = Collections.unmodifiableSet(keys);
    /** Guarded by publicSelected's monitor (and selections hold this selector's first). */
    private final Set<SelectionKey> selected = new HashSet<>();
    private final Set<SelectionKey> publicSelected = new UngrowableSet(selected);
    private final java.util.function.Consumer<SelectionKey> collectInner = this::onInnerReady;

    // ---- SDP readiness: any thread pushes, the selecting thread pops (signal / pollSdp)
    /** The keys signalled since the last poll, linked through {@link HybridKey#nextSignalled}. */
    @SuppressWarnings("unused") // through SIGNALLED_HEAD
    private volatile HybridKey signalledHead;
    /**
     * A selection is about to wait or waits in the inner selector: a signal must wake it. Written by
     * the selecting thread before it polls (the volatile write, then the read of the signalled list,
     * pair with a signaller's push, then its read of this flag: one of the two sees the other).
     */
    private volatile boolean blocking;
    /**
     * The thread of the selection that set {@link #blocking}: written before that volatile write, read
     * after a signaller's read of it. That thread's own signals (its polls run the engine, whose
     * readiness listener signals) write no wake-up to the inner selector: the selection looks at the
     * signalled list itself before it waits.
     */
    private Thread selecting;

    // ---- the selecting thread's own (under this selector's monitor)
    /** The keys whose SDP side was ready at the last poll, and the ones signalled since. */
    private HybridKey[] candidates = new HybridKey[16];
    private int candidateCount;
    /** This selection's ready keys (SDP or inner), each once: {@link HybridKey#listedIn}. */
    private HybridKey[] ready = new HybridKey[16];
    private int readyCount;
    private long selectionSeq;
    /**
     * Keys whose wake channel this selector holds and must arm before it next blocks: new ones, ones
     * rung since (a ring takes the arm) and ones disarmed when the last wait ended. Each is polled
     * after its arm, so what its peer sent before the arm is found; until then the peer rings nobody,
     * since this selector looks anyway.
     */
    private HybridKey[] toArm = new HybridKey[16];
    private int toArmCount;
    /** Keys armed for this selection's wait; disarmed when it ends, so that peers stop ringing an awake selector. */
    private HybridKey[] armed = new HybridKey[16];
    private int armedCount;
    /** The number every arm of the current blocking selection carries ({@link io.jsdp.verbs.WakeChannel#newWait}). */
    private int waitNumber;
    /** A wake channel was rung in this selection's inner wait. */
    private boolean rung;
    /**
     * How long a selection that finds nothing polls its SDP keys before it arms their wake channels and
     * blocks: {@link SdpOptions#spinNs()} ({@code jsdp.spinNs}), adapted to how recent spins ended and
     * gated by the JVM's {@link SpinGovernor} (no spinning when the peer would want this core), as a
     * blocked read's spin. A round trip whose answer comes within it costs no wake-up on either side.
     */
    private final SpinWindow spin;
    private final SpinGovernor governor;
    /** The keys a spin polls, copied from {@link #keys} at its start; cleared after it. */
    private HybridKey[] spinKeys = new HybridKey[SPIN_KEYS_MAX];
    /**
     * {@link #wakeup()} was called and no selection has waited in the inner selector since: a spin
     * stops at once (the inner selector's own wake-up, which it does not look at, ends the wait after).
     */
    private volatile boolean wakeupPending;
    /** This selection's spin found the window at 0 ({@link SpinWindow#parked} after its wait). */
    private boolean parkedAtOnce;

    private static final java.lang.invoke.VarHandle SIGNALLED_HEAD;
    /**
     * Property: whether the selector waits for SDP channels on their connections' wake channels (one
     * kernel wait, ended by the peer's write) or only hears of them from the engine's listener.
     */
    static final String DIRECT_WAKE_PROP = "jsdp.selector.directWake";
    /**
     * A key without a wake channel tries to take one at its first poll and then at every 64th: a
     * connection that has none (one process, DiSNI, TCP fallback) costs its polls nothing more, and one
     * whose wake channel is not set up yet gets it soon after.
     */
    private static final int WAKE_RETRY_MASK = 63;
    /**
     * A selector spins only with at most this many keys: each turn of the spin polls every SDP key, and
     * a selector serving many connections rarely finds none ready anyway.
     */
    static final int SPIN_KEYS_MAX = 8;
    /** {@link #DIRECT_WAKE_PROP}, read when the selector opens (a bad value fails the open, naming it). */
    private final boolean directWake = Agent.booleanProp(DIRECT_WAKE_PROP, true);

    static {
        try {
            SIGNALLED_HEAD = java.lang.invoke.MethodHandles.lookup().findVarHandle(HybridSelector.class, "signalledHead",
                HybridKey.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    HybridSelector(SelectorProvider provider, Selector inner) {
        this(provider, inner, new SdpOptions().spinNs(), SpinGovernor.jvm());
    }

    /** With its own spin window and governor (tests). */
    HybridSelector(SelectorProvider provider, Selector inner, long spinNs, SpinGovernor governor) {
        super(provider);
        this.inner = inner;
        this.spin = new SpinWindow(spinNs);
        this.governor = governor;
    }

    @Override
    protected SelectionKey register(AbstractSelectableChannel ch, int ops, Object att) {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
        HybridKey k = new HybridKey(this, ch, ops);
        k.attach(att);
        if (ch instanceof SdpSelectable s) {
            k.source = s;
            keys.add(k);
            s.keyAdded(k);
            signal(k); // polled at the next selection: it may be ready already
            return closedMeanwhile(k);
        }
        try {
            // a JDK channel: the inner selector watches it for us
            k.inner = ch.register(inner, ops, k);
        } catch (IOException e) {
            // closed meanwhile: the caller, SelectableChannel.register, declares ClosedChannelException
            throw HybridSelector.<RuntimeException>sneaky(e);
        }
        keys.add(k);
        return closedMeanwhile(k);
    }

    /** A close that ran between the open check and keys.add would never deregister the key: undo it. */
    private HybridKey closedMeanwhile(HybridKey k) {
        if (isOpen()) {
            return k;
        }
        keys.remove(k);
        if (k.inner != null) {
            k.inner.cancel();
        }
        if (k.source != null) {
            k.source.keyRemoved(k);
        }
        throw new ClosedSelectorException();
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    @Override
    public Set<SelectionKey> keys() {
        ensureOpen();
        return publicKeys;
    }

    @Override
    public Set<SelectionKey> selectedKeys() {
        ensureOpen();
        return publicSelected;
    }

    private void ensureOpen() {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
    }

    @Override
    public int selectNow() throws IOException {
        return doSelect(-1);
    }

    @Override
    public int select(long timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return doSelect(timeout);
    }

    @Override
    public int select() throws IOException {
        return doSelect(0);
    }

    /** @param timeoutMs -1 for no wait, 0 for no limit, else milliseconds */
    private int doSelect(long timeoutMs) throws IOException {
        synchronized (this) {
            ensureOpen();
            synchronized (publicSelected) {
                return selectLocked(timeoutMs);
            }
        }
    }

    private int selectLocked(long timeoutMs) throws IOException {
        flushCancelled();
        selectionSeq++;
        readyCount = 0;
        boolean wait = false;
        boolean signalledMeanwhile = false;
        armWakes(false);
        if (timeoutMs >= 0) {
            selecting = Thread.currentThread();
            waitNumber = io.jsdp.verbs.WakeChannel.newWait(); // one ring per wait from each peer process
            blocking = true; // before the poll: a signal after it sees the flag and wakes the wait
            try {
                int found = pollSdp();
                if (found == 0 && SIGNALLED_HEAD.getVolatile(this) == null) {
                    found = spinLocked(timeoutMs); // before arming: while it polls, the peers ring no one
                }
                if (found == 0 && toArmCount > 0 && SIGNALLED_HEAD.getVolatile(this) == null) {
                    // about to wait: arm the wake channels that are not, then look at their keys once more
                    armWakes(true);
                    found = pollSdp();
                }
                // a key signalled during the poll (by this thread, which wrote no wake-up) ends the wait before it starts
                signalledMeanwhile = found == 0 && SIGNALLED_HEAD.getVolatile(this) != null;
                wait = found == 0 && !signalledMeanwhile;
            } finally {
                if (!wait) {
                    blocking = false; // also when the poll threw
                }
            }
        } else {
            pollSdp();
        }
        long waitStart = parkedAtOnce && wait ? System.nanoTime() : 0;
        if (wait) {
            begin(); // an interrupt calls wakeup(), which ends the inner wait
        }
        try {
            if (!wait) {
                inner.selectNow(collectInner);
            } else if (Thread.currentThread().isInterrupted()) {
                inner.selectNow(collectInner); // interrupted before the wait: the JDK returns at once
            } else if (timeoutMs == 0) {
                inner.select(collectInner);
            } else {
                inner.select(collectInner, timeoutMs);
            }
        } finally {
            wakeupPending = false; // the inner selection took any wake-up (a later one sets it again)
            if (wait) {
                blocking = false;
                end();
            }
        }
        if (armedCount != 0) {
            disarmAfterWait();
        }
        if (waitStart != 0) {
            spin.parked(System.nanoTime() - waitStart);
        }
        parkedAtOnce = false;
        if (wait || rung || signalledMeanwhile) {
            rung = false;
            pollSdp(); // the keys signalled during the wait or the poll before it, or rung
        }
        flushCancelled();
        return applyReady();
    }

    /** The inner selector's action: a JDK channel's (or delegate's) readiness joins its key's. */
    private void onInnerReady(SelectionKey ik) {
        Object a = ik.attachment();
        if (a instanceof Rung r) {
            onRung(r.key);
            return;
        }
        HybridKey k = (HybridKey) a;
        if (k != null && k.isValid() && ik.isValid()) {
            addReady(k, ik.readyOps());
        }
    }

    /** Lists a key as ready in this selection (once), with these ops added to its pending ready set. */
    private void addReady(HybridKey k, int ops) {
        if (k.listedIn != selectionSeq) {
            k.listedIn = selectionSeq;
            k.pending = 0;
            if (readyCount == ready.length) {
                ready = java.util.Arrays.copyOf(ready, readyCount * 2);
            }
            ready[readyCount++] = k;
        }
        k.pending |= ops;
    }

    /**
     * Polls the SDP side of the keys that may be ready: those signalled since the last poll (readiness
     * listener, interest change, registration, channel state change) and those found ready at the
     * last poll — readiness is level-triggered, so a key still ready is selected again without a new
     * event. A key found not ready leaves the list until it is signalled again. O(those keys), not
     * O(all keys). Exception-safe: when a channel's poll throws, that key and the ones after it stay
     * candidates and the list stays whole, so the next selection works (the exception propagates).
     *
     * @return the number of keys whose SDP side is ready for their interest
     */
    private int pollSdp() {
        HybridKey k = (HybridKey) SIGNALLED_HEAD.getAndSet(this, null);
        while (k != null) {
            HybridKey next = k.nextSignalled;
            k.nextSignalled = null;
            HybridKey.SIGNALLED.setVolatile(k, 0); // before the poll below: a later signal lists the key again
            if (!k.candidate) {
                k.candidate = true;
                if (candidateCount == candidates.length) {
                    candidates = java.util.Arrays.copyOf(candidates, candidateCount * 2);
                }
                candidates[candidateCount++] = k;
            }
            k = next;
        }
        int kept = 0;
        int i = 0;
        try {
            for (; i < candidateCount; i++) {
                HybridKey c = candidates[i];
                SdpSelectable s = c.source;
                if (s != null && c.wake == null && directWake && c.isValid() && (c.wakeTries++ & WAKE_RETRY_MASK) == 0) {
                    attachWake(c, s); // at the key's first poll, then every 64th while it has none
                }
                int ops = s != null && c.isValid() ? s.nativeReadyOps() & c.interestOpsRaw() : 0;
                candidates[i] = null;
                if (ops == 0) {
                    c.candidate = false;
                    continue;
                }
                addReady(c, ops);
                candidates[kept++] = c;
            }
        } finally {
            for (int j = i; j < candidateCount; j++) { // a poll threw at i: keep it and the rest (kept <= j)
                HybridKey c = candidates[j];
                candidates[j] = null;
                candidates[kept++] = c;
            }
            candidateCount = kept;
        }
        return kept;
    }

    // ---- wake channels: a peer's write wakes this selector's inner wait directly

    /** The attachment of a wake channel's key in the inner selector. */
    private record Rung(HybridKey key) {
    }

    /**
     * Takes the SDP connection's wake channel for this selector, when it has one that nobody holds,
     * and watches it in the inner selector: from then on the peer's writes end this selector's wait
     * themselves (no thread in between). Its arm comes before the next blocking selection.
     */
    private void attachWake(HybridKey k, SdpSelectable s) {
        io.jsdp.verbs.WakeChannel wc = s.wakeChannel();
        if (wc == null || !wc.claim(this)) {
            return;
        }
        try {
            k.wakeKey = wc.channel().register(inner, SelectionKey.OP_READ, new Rung(k));
        } catch (java.nio.channels.ClosedChannelException | java.nio.channels.IllegalSelectorException
                 | java.nio.channels.IllegalBlockingModeException e) {
            wc.release(this); // closed meanwhile, or not a JDK channel of the inner selector's provider
            return;
        }
        k.wake = wc;
        if (blocking) {
            armForWait(k, wc); // this selection may block next: the caller's poll of the key is the look after the arm
        } else {
            addToArm(k);
        }
    }

    private boolean armForWait(HybridKey k, io.jsdp.verbs.WakeChannel wc) {
        boolean sendsToo = armWake(k, wc);
        if (armedCount == armed.length) {
            armed = java.util.Arrays.copyOf(armed, armedCount * 2);
        }
        armed[armedCount++] = k;
        return sendsToo;
    }

    /**
     * After a selection that armed: withdraws every arm the wait left standing and lists the keys to be
     * armed again before the next wait. An arm outliving its wait makes the peer ring an awake
     * selector (a write there, a drain and a wake-up of the next wait here) once per armed connection.
     * An arm the peer took is a key to look at: its ring may have gone to another key of the wait.
     */
    private void disarmAfterWait() {
        for (int i = 0; i < armedCount; i++) {
            HybridKey k = armed[i];
            armed[i] = null;
            io.jsdp.verbs.WakeChannel wc = k.wake;
            if (wc != null && k.isValid()) {
                if (wc.disarm()) { // a ring already on its way is drained at the next selection
                    signal(k);
                }
                addToArm(k);
            }
        }
        armedCount = 0;
    }

    /** @return whether the arm covers sends too */
    private boolean armWake(HybridKey k, io.jsdp.verbs.WakeChannel wc) {
        SdpSelectable s = k.source;
        boolean sendsToo = (k.interestOpsRaw() & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT)) != 0 || s == null
            || s.wakeOnSends();
        wc.arm(sendsToo, waitNumber);
        return sendsToo;
    }

    /** The inner selector found a wake channel rung: take the rings, poll the key, arm it again before blocking. */
    private void onRung(HybridKey k) {
        io.jsdp.verbs.WakeChannel wc = k.wake;
        if (wc == null) {
            return;
        }
        if (!wc.drain()) {
            detachWake(k); // the peer closed it: the engine's listener tells us from now on
        }
        rung = true;
        signal(k);
        if (k.wake != null) {
            addToArm(k);
        }
    }

    private void addToArm(HybridKey k) {
        if (k.toArm) {
            return;
        }
        k.toArm = true;
        if (toArmCount == toArm.length) {
            toArm = java.util.Arrays.copyOf(toArm, toArmCount * 2);
        }
        toArm[toArmCount++] = k;
    }

    /**
     * Every key waiting for its arm is looked at in this selection; when the selection is about to block
     * ({@code mayBlock}), the keys are armed first (then the look is the one after the arm), else they
     * stay unarmed and are looked at again next time. A busy selector thus arms nothing: its peers'
     * writes ring no one (no system call on either side) while it finds work at every selection. The
     * look is the device's {@linkplain io.jsdp.verbs.WakeChannel#quiet quiet check}, a few reads of
     * memory; only a key it does not find quiet is polled. Polling every idle key instead cost a blocking
     * selection one poll of the queue pair per idle connection (with 64 connections and a foreign busy
     * loop on the cores, about ten per wait).
     */
    private void armWakes(boolean mayBlock) {
        for (int i = 0; i < toArmCount; i++) {
            HybridKey k = toArm[i];
            io.jsdp.verbs.WakeChannel wc = k.wake;
            if (wc == null || !k.isValid()) {
                if (mayBlock) {
                    k.toArm = false;
                    toArm[i] = null;
                }
                continue;
            }
            boolean sendsToo = true; // unarmed: answers to sends count, whether or not a wait would wake for them
            if (mayBlock) {
                k.toArm = false;
                toArm[i] = null;
                sendsToo = armForWait(k, wc);
            }
            if (!wc.quiet(sendsToo)) {
                signal(k);
            }
        }
        if (mayBlock) {
            toArmCount = 0;
        }
    }

    /** Gives a key's wake channel up (key cancelled, channel dead, selector closing). */
    private void detachWake(HybridKey k) {
        io.jsdp.verbs.WakeChannel wc = k.wake;
        if (wc == null) {
            return;
        }
        k.wake = null;
        SelectionKey wk = k.wakeKey;
        k.wakeKey = null;
        if (wk != null) {
            wk.cancel();
        }
        wc.release(this);
    }

    /** Applies the JDK's rules to this selection's ready keys. */
    private int applyReady() {
        int updated = 0;
        for (int i = 0; i < readyCount; i++) {
            HybridKey k = ready[i];
            ready[i] = null;
            int ops = k.pending & k.interestOpsRaw();
            k.pending = 0;
            if (ops == 0 || !k.isValid()) {
                continue;
            }
            if (selected.contains(k)) {
                int old = k.readyOpsRaw();
                if ((ops & ~old) != 0) {
                    k.readyOps(old | ops);
                    updated++;
                }
            } else {
                k.readyOps(ops);
                selected.add(k);
                updated++;
            }
        }
        readyCount = 0;
        return updated;
    }

    /**
     * Puts a key on the signalled list (at most once until the next poll takes it): any thread, no
     * lock, no allocation (an intrusive Treiber stack the selecting thread empties at once).
     *
     * @return whether a selection is waiting in the inner selector now or about to
     */
    boolean signal(HybridKey k) {
        if (HybridKey.SIGNALLED.compareAndSet(k, 0, 1)) {
            for (;;) {
                HybridKey head = (HybridKey) SIGNALLED_HEAD.getVolatile(this);
                k.nextSignalled = head;
                if (SIGNALLED_HEAD.compareAndSet(this, head, k)) {
                    break;
                }
            }
        }
        return blocking;
    }

    /** Deregisters the cancelled keys (AbstractSelector's set), as the JDK does around a selection. */
    private void flushCancelled() {
        Set<SelectionKey> cancelled = cancelledKeys();
        synchronized (cancelled) {
            if (cancelled.isEmpty()) {
                return;
            }
            for (SelectionKey sk : cancelled) {
                HybridKey k = (HybridKey) sk;
                keys.remove(k);
                selected.remove(k);
                detachWake(k);
                if (k.inner != null) {
                    k.inner.cancel();
                }
                if (k.source != null) {
                    k.source.keyRemoved(k);
                }
                deregister(k);
            }
            cancelled.clear();
        }
    }

    @Override
    public Selector wakeup() {
        wakeupPending = true; // before the inner wake-up: a spin sees one or the inner wait the other
        inner.wakeup();
        return this;
    }

    /**
     * The spin of a selection that found nothing ready (see {@link #spin}): polls every SDP key until
     * one is ready, the window passes, a wake-up or an interrupt comes, or the thread finds it was
     * descheduled. JDK channels are not looked at meanwhile (a look would take the inner selector's
     * wake-up): their readiness waits for the wait that follows, at most the window later, and a
     * selector woken only by them soon stops spinning (each spin that ends empty halves the window).
     *
     * @return the number of ready keys found, 0 when the spin ended without any
     */
    private int spinLocked(long timeoutMs) {
        int n = keys.size();
        if (n == 0 || n > SPIN_KEYS_MAX || wakeupPending) {
            return 0;
        }
        long start = System.nanoTime();
        long window = 0;
        if (governor.mayStart(start)) {
            window = spin.next();
            parkedAtOnce = window == 0;
        }
        if (timeoutMs > 0) {
            window = Math.min(window, TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        }
        if (window <= 0) {
            return 0;
        }
        HybridKey[] ks = keys.toArray(spinKeys);
        spinKeys = ks;
        governor.enter();
        try {
            long last = start;
            long until = start + window;
            for (;;) {
                boolean any = false;
                for (HybridKey k : ks) {
                    if (k == null) {
                        break;
                    }
                    if (k.source != null && k.isValid()) {
                        signal(k);
                        any = true;
                    }
                }
                if (!any) {
                    return 0; // JDK channels only: nothing to poll
                }
                int found = pollSdp();
                if (found != 0) {
                    spin.hit();
                    return found;
                }
                if (wakeupPending || Thread.currentThread().isInterrupted()) {
                    return 0;
                }
                long now = System.nanoTime();
                if (now - last >= SpinGovernor.PREEMPTION_GAP_NS && governor.adaptive()) {
                    governor.onPreempted(now - last, now); // descheduled: a core is wanted elsewhere
                    return 0;
                }
                if (now - until >= 0) {
                    spin.miss();
                    return 0;
                }
                last = now;
                Thread.onSpinWait();
            }
        } finally {
            governor.exit();
            java.util.Arrays.fill(ks, null); // no cancelled key stays reachable from here
        }
    }

    @Override
    protected void implCloseSelector() throws IOException {
        wakeup(); // as the JDK's: a selection in progress, spinning or waiting, returns
        synchronized (this) {
            synchronized (publicSelected) {
                for (HybridKey k : keys) {
                    detachWake(k);
                    if (k.inner != null) {
                        k.inner.cancel();
                    }
                    if (k.source != null) {
                        k.source.keyRemoved(k);
                    }
                    deregister(k);
                }
                keys.clear();
                selected.clear();
                java.util.Arrays.fill(candidates, null);
                candidateCount = 0;
                java.util.Arrays.fill(toArm, null);
                toArmCount = 0;
                SIGNALLED_HEAD.setVolatile(this, null); // a late signal may still push: unreachable garbage then
                flushCancelledAfterClose();
                inner.close();
            }
        }
    }

    private void flushCancelledAfterClose() {
        Set<SelectionKey> cancelled = cancelledKeys();
        synchronized (cancelled) {
            cancelled.clear();
        }
    }

    /** A selection key of this selector; for a JDK channel it shadows the inner selector's key. */
    static final class HybridKey extends java.nio.channels.spi.AbstractSelectionKey {
        private final HybridSelector selector;
        private final SelectableChannel channel;
        private volatile int interestOps;
        private volatile int readyOps;
        /** The inner selector's key of a JDK channel or of a jsdp channel's JDK delegate. */
        volatile SelectionKey inner;
        /** The jsdp channel whose SDP side this key watches, or null for a JDK channel. */
        volatile SdpSelectable source;
        /** Ready ops gathered during one selection; touched only by the selecting thread. */
        int pending;
        /** The selection whose ready list holds the key; the selecting thread's. */
        long listedIn;
        /** On the selector's candidate list; the selecting thread's. */
        boolean candidate;
        /**
         * The SDP connection's wake channel while this selector holds it, and its key in the inner
         * selector; the selecting thread's.
         */
        io.jsdp.verbs.WakeChannel wake;
        SelectionKey wakeKey;
        /** Listed in the selector's keys to arm; the selecting thread's. */
        boolean toArm;
        /** Polls of the key without a wake channel: the selector tries to take one at one in 64. */
        int wakeTries;
        /** 1 while on the selector's signalled list (CAS by signallers, cleared by the poll). */
        @SuppressWarnings("unused") // through SIGNALLED
        private volatile int signalled;
        /** The next key on the signalled list: written by the pusher that set {@link #signalled}. */
        HybridKey nextSignalled;

        static final java.lang.invoke.VarHandle SIGNALLED;

        static {
            try {
                SIGNALLED = java.lang.invoke.MethodHandles.lookup().findVarHandle(HybridKey.class, "signalled", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        HybridKey(HybridSelector selector, SelectableChannel channel, int ops) {
            this.selector = selector;
            this.channel = channel;
            this.interestOps = ops;
        }

        @Override
        public SelectableChannel channel() {
            return channel;
        }

        @Override
        public Selector selector() {
            return selector;
        }

        @Override
        public int interestOps() {
            ensureValid();
            return interestOps;
        }

        @Override
        public SelectionKey interestOps(int ops) {
            ensureValid();
            if ((ops & ~channel.validOps()) != 0) {
                throw new IllegalArgumentException("Invalid interest ops: " + ops);
            }
            interestOps = ops;
            SelectionKey i = inner;
            if (i != null) {
                i.interestOps(ops); // CancelledKeyException when the channel closed meanwhile: so are we
            }
            if (source != null) {
                selector.signal(this); // seen by the next selection, as the JDK's (no wakeup)
            }
            return this;
        }

        @Override
        public int readyOps() {
            ensureValid();
            return readyOps;
        }

        /**
         * Watches a jsdp channel's JDK delegate (its TCP fallback connection, a server's TCP half) in the
         * inner selector, replacing the delegate watched before.
         *
         * @param delegate the JDK channel, non-blocking
         * @throws java.nio.channels.ClosedChannelException when the delegate is closed
         */
        void useDelegate(SelectableChannel delegate) throws java.nio.channels.ClosedChannelException {
            SelectionKey old = inner;
            if (old != null && old.channel() == delegate) {
                return;
            }
            inner = delegate.register(selector.inner, interestOps, this);
            if (old != null) {
                old.cancel();
            }
        }

        /**
         * The SDP side's readiness may have changed (the engine's readiness listener, a server's accept
         * listener): the key joins the selector's ready list and a waiting selection wakes.
         */
        void wakeSelector() {
            if (selector.signal(this) && selector.selecting != Thread.currentThread()) {
                selector.wakeup();
            }
        }

        /**
         * The channel's state changed what its SDP side reports (a connect finished): the next selection
         * polls the key. Wakes no one, as an interest change does not.
         */
        void pollAgain() {
            selector.signal(this);
        }

        int interestOpsRaw() {
            return interestOps;
        }

        int readyOpsRaw() {
            return readyOps;
        }

        void readyOps(int ops) {
            readyOps = ops;
        }

        private void ensureValid() {
            if (!isValid()) {
                throw new java.nio.channels.CancelledKeyException();
            }
        }

        @Override
        public String toString() {
            return "HybridKey[" + channel + (isValid() ? ", interest=" + interestOps + ", ready=" + readyOps : ", invalid")
                + "]";
        }
    }

    /** The selected-key set as users see it: removal yes, addition no (the JDK's ungrowable set). */
    private static final class UngrowableSet extends AbstractSet<SelectionKey> {
        private final Set<SelectionKey> set;

        UngrowableSet(Set<SelectionKey> set) {
            this.set = set;
        }

        @Override
        public Iterator<SelectionKey> iterator() {
            return set.iterator();
        }

        @Override
        public int size() {
            return set.size();
        }

        @Override
        public boolean contains(Object o) {
            return set.contains(o);
        }

        @Override
        public boolean remove(Object o) {
            return set.remove(o);
        }

        @Override
        public void clear() {
            set.clear();
        }

        @Override
        public boolean add(SelectionKey k) {
            throw new UnsupportedOperationException();
        }
    }
}
