package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** A SoftRdma connection-manager event channel: a FIFO of events, waited on by parking. */
final class SoftCmEventChannel implements CmEventChannel, SoftDevice.SoftObject {
    private final SoftDevice device;
    private final Tracked tracked;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    /** Guarded by lock. */
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    /** Guarded by lock. */
    private boolean closed;
    /** Ids using this channel; close() refuses while any is open. */
    final AtomicInteger users = new AtomicInteger();

    SoftCmEventChannel(SoftDevice device) {
        this.device = device;
        this.tracked = device.resources().track(this, "CM_CHANNEL", "CM event channel on " + device.name());
        device.register(this);
    }

    SoftDevice device() {
        return device;
    }

    /** Queues an event, applying the device's CM fault injection (loss, delay). */
    void deliver(CmEvent event) {
        SoftFaults f = device.faults();
        if (f.takeLostEvent(event.type())) {
            SoftCmId.TRACE.record(io.jsdp.ras.TraceLevel.RARE, "cm.eventLost", event.type().ordinal());
            return;
        }
        long delayNs = f.cmEventDelayNs();
        if (delayNs > 0) {
            device.schedule(() -> enqueue(event), delayNs);
        } else {
            enqueue(event);
        }
    }

    private void enqueue(CmEvent event) {
        lock.lock();
        try {
            if (!closed) {
                events.addLast(event);
                arrived.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CmEvent poll(long timeoutNs) throws InterruptedException, VerbsException {
        lock.lockInterruptibly();
        try {
            long remainingNs = timeoutNs;
            while (true) {
                if (closed) {
                    throw new VerbsException(Errno.EINVAL, "CM event channel is closed");
                }
                CmEvent e = events.pollFirst();
                if (e != null) {
                    return e;
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

    @Override
    public void close() throws VerbsException {
        int n = users.get();
        if (n > 0) {
            throw new VerbsException(Errno.EBUSY, "CM event channel still has " + n + " id(s)");
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
            events.clear();
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
        device.unregister(this);
        tracked.release();
    }
}
