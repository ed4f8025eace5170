package io.jsdp.verbs.disni;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.VerbsException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A completion channel of the port. DiSNI's {@code getCqEvent} drops the queue that
 * {@code ibv_get_cq_event} names, so a DiSNI channel shared by several queues could not say which one fired
 * (and acknowledging the wrong one makes {@code ibv_destroy_cq} wait forever). Each completion queue
 * therefore has a DiSNI channel of its own and this channel is the set of them: with one queue, waiting is
 * DiSNI's blocking wait on that queue's channel; with several, each is looked at in turn with a 1 ms wait.
 * DiSNI's wait is a native {@code poll(2)}: it pins a virtual thread's carrier and does not see interrupts,
 * so it waits in slices of at most {@value #SLICE_MS} ms and checks for interrupts between them.
 */
final class DisniCompletionChannel implements CompletionChannel, DisniObject {
    /** Longest single native wait. */
    static final int SLICE_MS = 50;

    private final DisniDevice device;
    private final Tracked tracked;
    private static final DisniCompletionQueue[] NONE = {};

    /**
     * The queues of this channel, replaced whole when one joins or leaves; a waiter reads it once per round,
     * so a queue destroyed by another thread while it looks cannot shift the indices it walks.
     */
    private volatile DisniCompletionQueue[] queues = NONE;
    /** Where the next round of looking starts with several queues; racy on purpose (fairness only). */
    private int next;
    private volatile boolean closed;

    DisniCompletionChannel(DisniDevice device) {
        this.device = device;
        this.tracked = device.resources().track(this, "completion channel", "completion channel on " + device.name());
        device.register(this);
    }

    synchronized void add(DisniCompletionQueue q) {
        DisniCompletionQueue[] now = Arrays.copyOf(queues, queues.length + 1);
        now[now.length - 1] = q;
        queues = now;
    }

    synchronized void remove(DisniCompletionQueue q) {
        DisniCompletionQueue[] now = queues;
        for (int i = 0; i < now.length; i++) {
            if (now[i] == q) {
                DisniCompletionQueue[] less = new DisniCompletionQueue[now.length - 1];
                System.arraycopy(now, 0, less, 0, i);
                System.arraycopy(now, i + 1, less, i, less.length - i);
                queues = less;
                return;
            }
        }
    }

    RdmaDevice device() {
        return device;
    }

    void ensureOpen() throws VerbsException {
        if (closed) {
            throw new VerbsException(Errno.EINVAL, "completion channel on " + device.name() + " is closed");
        }
    }

    @Override
    public CompletionQueue await(long timeoutNs) throws InterruptedException, VerbsException {
        ensureOpen();
        long start = System.nanoTime();
        for (;;) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            long remainingNs = timeoutNs - (System.nanoTime() - start);
            DisniCompletionQueue[] qs = queues;
            int n = qs.length;
            if (n == 0) {
                if (remainingNs <= 0) {
                    return null;
                }
                LockSupport.parkNanos(Math.min(remainingNs, TimeUnit.MILLISECONDS.toNanos(SLICE_MS)));
            } else if (n == 1) {
                DisniCompletionQueue q = qs[0];
                if (q.waitEvent(remainingNs <= 0 ? 0 : (int) Math.min(SLICE_MS, ceilMs(remainingNs)))) {
                    return q;
                }
            } else {
                int from = next;
                for (int i = 0; i < n; i++) {
                    DisniCompletionQueue q = qs[(from + i) % n];
                    if (q.waitEvent(0)) {
                        next = (from + i + 1) % n;
                        return q;
                    }
                }
                if (remainingNs > 0) {
                    DisniCompletionQueue q = qs[from % n];
                    next = (from + 1) % n;
                    if (q.waitEvent(1)) {
                        return q;
                    }
                }
            }
            ensureOpen();
            if (timeoutNs - (System.nanoTime() - start) <= 0) {
                return null;
            }
        }
    }

    private static long ceilMs(long ns) {
        return (ns + 999_999L) / 1_000_000L;
    }

    @Override
    public void close() throws VerbsException {
        int n = queues.length;
        if (n != 0) {
            throw new VerbsException(Errno.EBUSY, "completion channel on " + device.name() + " still has "
                + n + " completion queue(s)");
        }
        forceClose();
    }

    @Override
    public int closeOrder() {
        return 4;
    }

    @Override
    public synchronized void forceClose() {
        if (closed) {
            return;
        }
        closed = true;
        device.unregister(this);
        tracked.release();
    }
}
