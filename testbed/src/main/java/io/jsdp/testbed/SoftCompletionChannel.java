package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A SoftRdma completion channel: a queue of completion queues that fired their one-shot event.
 * Waiters park on a {@link Condition} (no monitor), so virtual threads unmount while they wait.
 */
final class SoftCompletionChannel implements CompletionChannel, SoftDevice.SoftObject {
    private final SoftDevice device;
    private final Tracked tracked;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition fired = lock.newCondition();
    /** Queues whose event has not been taken yet; guarded by lock. */
    private final ArrayDeque<SoftCompletionQueue> ready = new ArrayDeque<>();
    /** Completion queues using this channel; close() refuses while any is open. */
    final AtomicInteger users = new AtomicInteger();
    /** Guarded by lock. */
    private boolean closed;

    SoftCompletionChannel(SoftDevice device) {
        this.device = device;
        this.tracked = device.resources().track(this, "COMP_CHANNEL", "completion channel on " + device.name());
        device.register(this);
    }

    SoftDevice device() {
        return device;
    }

    /** Called by a completion queue whose armed event fires. */
    void signal(SoftCompletionQueue cq) {
        lock.lock();
        try {
            // A queue closed meanwhile leaves no stale event (close sets its flag before forget()).
            if (!closed && !cq.isClosed()) {
                ready.addLast(cq);
                fired.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Forgets the pending events of a queue being destroyed. */
    void forget(SoftCompletionQueue cq) {
        lock.lock();
        try {
            ready.removeIf(q -> q == cq);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CompletionQueue await(long timeoutNs) throws InterruptedException, VerbsException {
        lock.lockInterruptibly();
        try {
            long remainingNs = timeoutNs;
            while (true) {
                if (closed) {
                    throw new VerbsException(Errno.EINVAL, "completion channel is closed");
                }
                SoftCompletionQueue cq = ready.pollFirst();
                if (cq != null) {
                    cq.eventDelivered();
                    return cq;
                }
                if (remainingNs <= 0) {
                    return null;
                }
                remainingNs = fired.awaitNanos(remainingNs);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits without a deadline; for callers that wake themselves through a close.
     *
     * @return the queue that fired
     * @throws InterruptedException when interrupted
     * @throws VerbsException when the channel is closed
     */
    CompletionQueue awaitForever() throws InterruptedException, VerbsException {
        return await(TimeUnit.DAYS.toNanos(365));
    }

    @Override
    public void close() throws VerbsException {
        int n = users.get();
        if (n > 0) {
            throw new VerbsException(Errno.EBUSY, "completion channel still has " + n + " completion queue(s)");
        }
        forceClose();
    }

    @Override
    public void forceClose() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            ready.clear();
            fired.signalAll();
        } finally {
            lock.unlock();
        }
        device.unregister(this);
        tracked.release();
    }
}
