package io.jsdp.testbed;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * The FIFO behind SoftRdma's event channels (completion channel, CM event channel): producers offer,
 * waiters park on a {@link Condition} with a deadline. No monitor is held while waiting, so virtual
 * threads unmount. Closing wakes every waiter, which then fails.
 *
 * @param <T> the event type
 */
final class ParkingQueue<T> {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    /** Guarded by lock. */
    private final ArrayDeque<T> items = new ArrayDeque<>();
    /** Guarded by lock. */
    private boolean closed;
    private final String closedMessage;

    ParkingQueue(String closedMessage) {
        this.closedMessage = closedMessage;
    }

    /** Adds an item unless closed or {@code accept} refuses it (checked under the lock); true when added. */
    boolean offer(T item, Predicate<T> accept) {
        lock.lock();
        try {
            if (closed || !accept.test(item)) {
                return false;
            }
            items.addLast(item);
            arrived.signal();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Removes every queued item {@code drop} selects. */
    void removeIf(Predicate<T> drop) {
        lock.lock();
        try {
            items.removeIf(drop);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the next item, parking up to {@code timeoutNs}.
     *
     * @return the item, or null when the time ran out
     * @throws InterruptedException when interrupted while waiting
     * @throws VerbsException when the queue is closed
     */
    T poll(long timeoutNs) throws InterruptedException, VerbsException {
        lock.lockInterruptibly();
        try {
            long remainingNs = timeoutNs;
            while (true) {
                if (closed) {
                    throw new VerbsException(Errno.EINVAL, closedMessage);
                }
                T item = items.pollFirst();
                if (item != null) {
                    return item;
                }
                if (remainingNs <= 0) {
                    return null;
                }
                remainingNs = arrived.awaitNanos(remainingNs);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Closes: drops queued items and wakes every waiter. Returns false when already closed. */
    boolean close() {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
            items.clear();
            arrived.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }
}
