package io.jsdp.testbed;

import io.jsdp.ras.Tracked;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.util.concurrent.atomic.AtomicInteger;

/** A SoftRdma connection-manager event channel: a FIFO of events ({@link ParkingQueue}: waiters park). */
final class SoftCmEventChannel implements CmEventChannel, SoftDevice.SoftObject {
    private final SoftDevice device;
    private final Tracked tracked;
    private final ParkingQueue<CmEvent> events = new ParkingQueue<>("CM event channel is closed");
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
        events.offer(event, e -> true);
    }

    @Override
    public CmEvent poll(long timeoutNs) throws InterruptedException, VerbsException {
        return events.poll(timeoutNs);
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
        if (events.close()) {
            device.unregister(this);
            tracked.release();
        }
    }
}
