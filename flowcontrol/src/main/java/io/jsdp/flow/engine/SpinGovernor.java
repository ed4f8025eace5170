package io.jsdp.flow.engine;

import io.jsdp.ras.TraceLevel;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;

/**
 * Whether a blocked operation may spin now: one per JVM, because cores are shared by every
 * connection (architecture decision 5; issue 27). Spinning pays only while the spinner's core is
 * not wanted by another runnable thread: on an oversubscribed machine a spinner takes the core its
 * peer (or any other thread) needs, and a round trip then waits for a scheduler time slice
 * (milliseconds) instead of a wake-up (tens of microseconds).
 *
 * <p>Three signals, all cheap:
 * <ul>
 *   <li><b>Room for the peer.</b> While spinning is on, the machine's runnable threads are sampled at
 *       most every {@link #SAMPLE_NS} ({@code /proc/loadavg}); a wait spins only when the most foreign
 *       runnable threads of the last {@link #SAMPLES} samples, plus the spinner, plus the peer it waits
 *       for (which must run to answer), fit the cores. A spinner that is not preempted can still
 *       delay its peer: the peer, just woken, finds every core taken and waits for one to be
 *       preempted, while a parked waiter would have left its core free. One busy thread beside a
 *       round trip on 2 cores is such a case.</li>
 *   <li><b>Preemption seen by a spinner.</b> A spinning thread looks at the clock on every turn; a
 *       gap of {@link #PREEMPTION_GAP_NS} or more between two turns means the kernel took its core
 *       for another runnable thread: there are more runnable threads than cores. The spinner stops
 *       at once and reports it ({@link #onPreempted}); spinning is then off for a back-off that starts
 *       at {@link #BACKOFF_MIN_NS} and doubles while preemptions keep recurring soon after spinning
 *       resumes, up to {@code jsdp.spin.backoffMaxMs}.</li>
 *   <li><b>Runnable threads before spinning resumes.</b> When the back-off has passed, the first
 *       spinner reads the number of runnable threads of the machine ({@code /proc/loadavg}, its
 *       fourth field, about 5 µs) and resumes only when the others, less this JVM's own spinners
 *       and the reader itself, leave a core free; otherwise it looks again after
 *       {@link #BACKOFF_MIN_NS}. So under a load that already fills every core no spinner probes
 *       at all.</li>
 * </ul>
 * Two spinning peers on an otherwise idle 2-core machine are not oversubscribed: neither is ever
 * preempted and the samples find no foreign thread, so both keep spinning. With one more busy
 * thread the samples find it, and spinning stops for both (each side samples for itself).
 *
 * <p>Threads: any thread calls {@link #mayStart}, {@link #enter}, {@link #exit} and
 * {@link #onPreempted}. The fast path of {@link #mayStart} is three volatile reads; a sample (one
 * thread at a time, by CAS) at most every {@link #SAMPLE_NS}; everything else happens on a
 * preemption or when a back-off ends (at most about a hundred times a second) and
 * holds this object's monitor, which no caller holds while it parks or blocks.
 */
public final class SpinGovernor {
    /** System property: whether spinning adapts to the machine's load (else it always spins {@code jsdp.spinNs}). */
    public static final String ADAPTIVE_PROP = "jsdp.spin.adaptive";
    /** Default of {@link #ADAPTIVE_PROP}. */
    public static final boolean ADAPTIVE_DEFAULT = true;
    /** System property: the longest time spinning stays off after repeated preemptions. */
    public static final String BACKOFF_MAX_MS_PROP = "jsdp.spin.backoffMaxMs";
    /** Default of {@link #BACKOFF_MAX_MS_PROP}. */
    public static final long BACKOFF_MAX_MS_DEFAULT = 1_000;
    /**
     * A spinner that went this long between two looks at the clock was descheduled. Far above a turn
     * of the spin loop (a poll of the completion queue, about a microsecond) and far below a
     * scheduler time slice (0.75–3 ms), so neither is mistaken for the other; a GC pause is, and
     * costs one back-off.
     */
    public static final long PREEMPTION_GAP_NS = 200_000;
    /** How often, at most, the runnable threads are sampled while spinning is on ({@link #mayStart}). */
    public static final long SAMPLE_NS = 100_000;
    /** Samples kept: a spinner needs room for itself and its peer in every one of them. */
    static final int SAMPLES = 16;
    /** The first back-off, and how soon a spinner looks again when the runnable threads fill the cores. */
    public static final long BACKOFF_MIN_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private static final SpinGovernor JVM = new SpinGovernor(
        SdpOptions.booleanProp(ADAPTIVE_PROP, ADAPTIVE_DEFAULT),
        TimeUnit.MILLISECONDS.toNanos(SdpOptions.longProp(BACKOFF_MAX_MS_PROP, BACKOFF_MAX_MS_DEFAULT, 10, 3_600_000)),
        Runtime.getRuntime().availableProcessors(), new LoadAvg());

    private final boolean adaptive;
    private final long backoffMaxNs;
    private final int cores;
    private final IntSupplier runnableThreads;

    /** When spinning may resume ({@code nanoTime} base), or 0 while it is on. Written under the monitor. */
    private volatile long offUntilNs;
    /** This JVM's threads spinning now. */
    private final AtomicInteger spinningNow = new AtomicInteger();

    // ---- guarded by this object's monitor
    private long backoffNs = BACKOFF_MIN_NS;
    /** When spinning last resumed after a back-off; a preemption soon after it doubles the back-off. */
    private long resumedAtNs;
    private int lastRunnable = -1;

    /** When the runnable threads may be sampled next (once {@link #sampledYet}). */
    private final AtomicLong nextSampleNs = new AtomicLong();
    private volatile boolean sampledYet;
    /**
     * The most foreign runnable threads of the recent samples: all runnable but the sampling thread,
     * this JVM's spinners and the one peer thread the sampler waits for.
     */
    private volatile int foreignMax;
    // guarded by this object's monitor
    private final int[] foreign = new int[SAMPLES];
    private int samples;

    // ---- statistics (any thread)
    private final AtomicLong crowded = new AtomicLong();
    private final AtomicLong spins = new AtomicLong();
    private final AtomicLong preemptions = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicLong resumes = new AtomicLong();

    /**
     * A governor; the engine uses {@link #jvm()}.
     *
     * @param adaptive false: {@link #mayStart} always answers true
     * @param backoffMaxNs the longest back-off
     * @param cores the cores this JVM may use
     * @param runnableThreads the machine's runnable threads now, counting the caller; negative when unknown
     */
    public SpinGovernor(boolean adaptive, long backoffMaxNs, int cores, IntSupplier runnableThreads) {
        this.adaptive = adaptive;
        this.backoffMaxNs = Math.max(BACKOFF_MIN_NS, backoffMaxNs);
        this.cores = Math.max(1, cores);
        this.runnableThreads = runnableThreads;
    }

    /**
     * The JVM's governor, configured by {@link #ADAPTIVE_PROP} and {@link #BACKOFF_MAX_MS_PROP}.
     *
     * @return the governor
     */
    public static SpinGovernor jvm() {
        return JVM;
    }

    /**
     * Whether a thread about to wait may spin first. Call {@link #enter} when it does.
     *
     * @param nowNs {@link System#nanoTime()}
     * @return true to spin, false to park at once
     */
    public boolean mayStart(long nowNs) {
        if (!adaptive) {
            return true;
        }
        long off = offUntilNs;
        if (off != 0 && (nowNs - off < 0 || !resume(nowNs))) {
            return false;
        }
        sample(nowNs);
        if (foreignMax + 2 > cores) {
            // no core for both the spinner and the peer that must run to answer it: spinning would
            // take the peer's core, which then waits for a time slice (a parked waiter leaves it free)
            crowded.incrementAndGet();
            return false;
        }
        return true;
    }

    /**
     * At most once per {@link #SAMPLE_NS}: reads the machine's runnable threads and keeps the foreign
     * ones (less the caller, this JVM's spinners and the peer it waits for, which runs now or is about
     * to: the thread it just woke). The peer is runnable only part of the time, so a sample without it
     * counts one too few; the maximum of the last {@link #SAMPLES} does not. Two peers spinning on an
     * otherwise idle machine leave 0 foreign threads; one busy thread beside a round trip leaves 1.
     */
    private void sample(long nowNs) {
        long next = nextSampleNs.get();
        if (sampledYet && nowNs - next < 0 || !nextSampleNs.compareAndSet(next, nowNs + SAMPLE_NS)) {
            return;
        }
        sampledYet = true;
        int runnable = runnableThreads.getAsInt();
        if (runnable < 0) {
            return;
        }
        int f = Math.max(0, runnable - 2 - spinningNow.get());
        synchronized (this) {
            lastRunnable = runnable;
            foreign[samples++ % SAMPLES] = f;
            int max = 0;
            for (int v : foreign) {
                max = Math.max(max, v);
            }
            foreignMax = max;
        }
    }

    /** A thread starts spinning (after {@link #mayStart} said yes). */
    public void enter() {
        spinningNow.incrementAndGet();
        spins.incrementAndGet();
    }

    /** The thread that {@link #enter entered} stops spinning. */
    public void exit() {
        spinningNow.decrementAndGet();
    }

    /**
     * A spinner saw the clock jump by {@code gapNs} between two looks: it was descheduled. Turns
     * spinning off for the back-off. The caller stops spinning.
     *
     * @param gapNs the gap
     * @param nowNs {@link System#nanoTime()}
     */
    public void onPreempted(long gapNs, long nowNs) {
        preemptions.incrementAndGet();
        if (!adaptive) {
            return;
        }
        synchronized (this) {
            if (offUntilNs != 0) {
                return; // another spinner reported it first
            }
            // recurring soon after spinning resumed: the load is still there, so wait longer
            backoffNs = resumedAtNs != 0 && nowNs - resumedAtNs < 4 * backoffNs
                ? Math.min(backoffMaxNs, backoffNs * 2) : BACKOFF_MIN_NS;
            offUntilNs = nonZero(nowNs + backoffNs);
        }
        SdpStack.TRACE.message(TraceLevel.INTERNALS, "spin.off", "spinning off for " + backoffNs / 1_000_000
            + " ms: a spinner was descheduled for " + gapNs / 1_000 + " µs");
    }

    private synchronized boolean resume(long nowNs) {
        long off = offUntilNs;
        if (off == 0) {
            return true;
        }
        if (nowNs - off < 0) {
            return false;
        }
        int runnable = runnableThreads.getAsInt();
        lastRunnable = runnable;
        // the others: all runnable threads but this one and this JVM's spinners (each spinning peer of
        // ours counts among them: it would be one more thread wanting a core)
        int others = runnable - 1 - spinningNow.get();
        if (runnable >= 0 && others >= cores) {
            refusals.incrementAndGet();
            offUntilNs = nonZero(nowNs + BACKOFF_MIN_NS);
            return false;
        }
        resumes.incrementAndGet();
        resumedAtNs = nowNs;
        offUntilNs = 0;
        return true;
    }

    private static long nonZero(long t) {
        return t == 0 ? 1 : t;
    }

    /**
     * Whether this governor adapts ({@link #ADAPTIVE_PROP}): when not, a spinner spins its whole window.
     *
     * @return true when adaptive
     */
    public boolean adaptive() {
        return adaptive;
    }

    /**
     * Whether spinning is on now (for statistics).
     *
     * @return true while no back-off holds it off
     */
    public boolean on() {
        return !adaptive || offUntilNs == 0 || System.nanoTime() - offUntilNs >= 0;
    }

    /**
     * Preemptions spinners saw.
     *
     * @return the count
     */
    public long preemptions() {
        return preemptions.get();
    }

    /**
     * Times spinning resumed after a back-off.
     *
     * @return the count
     */
    public long resumes() {
        return resumes.get();
    }

    /**
     * Waits that spun ({@link #enter}).
     *
     * @return the count
     */
    public long spins() {
        return spins.get();
    }

    /**
     * Waits that did not spin because recent samples left no core for both the spinner and its peer.
     *
     * @return the count
     */
    public long crowded() {
        return crowded.get();
    }

    /**
     * Times spinning stayed off because the runnable threads filled the cores.
     *
     * @return the count
     */
    public long refusals() {
        return refusals.get();
    }

    /**
     * One line for {@code jsdp stat}: mode, whether spinning is on, and what decided it.
     *
     * @return the line
     */
    public String describe() {
        if (!adaptive) {
            return "fixed (" + ADAPTIVE_PROP + "=false)";
        }
        long now = System.nanoTime();
        long off = offUntilNs;
        int runnable;
        long backoff;
        synchronized (this) {
            runnable = lastRunnable;
            backoff = backoffNs;
        }
        return "adaptive, " + (off == 0 || now - off >= 0 ? "on" : "off for " + Math.max(1, (off - now) / 1_000_000) + " ms")
            + "; preemptions " + preemptions.get() + ", resumed " + resumes.get() + " times, refused " + refusals.get()
            + " times (runnable " + (runnable < 0 ? "unknown" : Integer.toString(runnable)) + " at the last look, "
            + cores + " cores), back-off " + backoff / 1_000_000 + " ms; foreign runnable " + foreignMax
            + " (recent most), waits not spun for want of a core for the peer " + crowded.get() + "; spinning now "
            + spinningNow.get();
    }

    /**
     * The machine's runnable threads from {@code /proc/loadavg} (Linux); -1 elsewhere. Read through a
     * {@link RandomAccessFile}, not a {@code FileChannel}: the caller is inside a socket channel's
     * blocking section, and an interruptible channel's own {@code begin}/{@code end} would replace that
     * channel's interrupt hook for the thread, so an interrupt would no longer close it.
     */
    static final class LoadAvg implements IntSupplier {
        private static final String PATH = "/proc/loadavg";
        private final byte[] bytes = new byte[128];
        private RandomAccessFile file;
        private boolean unavailable;

        @Override
        public synchronized int getAsInt() {
            if (unavailable) {
                return -1;
            }
            try {
                if (file == null) {
                    file = new RandomAccessFile(PATH, "r");
                }
                file.seek(0); // procfs makes the text anew for a read at offset 0
                int n = file.read(bytes);
                return n <= 0 ? -1 : parseRunnable(ByteBuffer.wrap(bytes, 0, n));
            } catch (IOException | RuntimeException e) {
                unavailable = true;
                SdpStack.TRACE.message(TraceLevel.RARE, "spin.noLoadavg", "adaptive spinning without /proc/loadavg: " + e);
                return -1;
            }
        }

        /** The fourth field's first number: "0.52 0.58 0.59 3/467 12345" gives 3; -1 when malformed. */
        static int parseRunnable(ByteBuffer b) {
            int fields = 0;
            int i = b.position();
            int end = b.limit();
            while (i < end && fields < 3) {
                if (b.get(i++) == ' ') {
                    fields++;
                }
            }
            int n = 0;
            int digits = 0;
            while (i < end) {
                byte c = b.get(i++);
                if (c < '0' || c > '9') {
                    return c == '/' && digits > 0 ? n : -1;
                }
                n = n * 10 + (c - '0');
                if (++digits > 9) {
                    return -1;
                }
            }
            return -1;
        }
    }
}
