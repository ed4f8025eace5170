package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A SoftRdma completion channel: a queue of completion queues that fired their one-shot event
 * ({@link ParkingQueue}: waiters park, no monitor).
 */
final class SoftCompletionChannel implements CompletionChannel, SoftDevice.SoftObject {
    private final SoftDevice device;
    private final Tracked tracked;
    /** Queues whose event has not been taken yet. */
    private final ParkingQueue<SoftCompletionQueue> ready = new ParkingQueue<>("completion channel is closed");
    /** Takes events found by device threads ({@link #dispatchTo}); null: every event goes to {@link #await}. */
    private volatile EventHandler handler;
    /** Completion queues using this channel; close() refuses while any is open. */
    final AtomicInteger users = new AtomicInteger();

    SoftCompletionChannel(SoftDevice device) {
        this.device = device;
        this.tracked = device.resources().track(this, "COMP_CHANNEL", "completion channel on " + device.name());
        device.register(this);
    }

    SoftDevice device() {
        return device;
    }

    /** Called by a completion queue whose armed event fires (the caller may hold queue-pair locks). */
    void signal(SoftCompletionQueue cq) {
        if (handler != null) {
            InlineDispatch d = InlineDispatch.current();
            if (d != null) {
                d.defer(this, cq); // a device thread: handed to the handler once it holds no lock
                return;
            }
        }
        // A queue closed meanwhile leaves no stale event (close sets its flag before forget()).
        ready.offer(cq, q -> !q.isClosed());
    }

    /** An event deferred by a device thread ({@link InlineDispatch#flush}), which holds no lock now. */
    void dispatch(SoftCompletionQueue cq) {
        if (cq.isClosed()) {
            return;
        }
        cq.eventDelivered();
        if (!handler.tryHandle(cq)) {
            cq.eventReturned();
            ready.offer(cq, q -> !q.isClosed());
        }
    }

    @Override
    public boolean dispatchTo(EventHandler h) {
        this.handler = h;
        return true;
    }

    /** Forgets the pending events of a queue being destroyed. */
    void forget(SoftCompletionQueue cq) {
        ready.removeIf(q -> q == cq);
    }

    @Override
    public CompletionQueue await(long timeoutNs) throws InterruptedException, VerbsException {
        SoftCompletionQueue cq = ready.poll(timeoutNs);
        if (cq != null) {
            cq.eventDelivered();
        }
        return cq;
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
        if (ready.close()) {
            device.unregister(this);
            tracked.release();
        }
    }
}
