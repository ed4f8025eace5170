package io.jsdp.testbed;

import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.WakeChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A queue pair's direct doorbell to its peer in another process: one Unix-domain connection per
 * linked pair of queue pairs (one file descriptor a side, as a TCP socket), opened by one side
 * ({@link XpEngine#initiatesDirect}) to the peer's node socket and handed there to the peer's queue
 * pair. Each side's waiting thread (or selector) waits for its own end to become readable; the peer
 * writes one byte when it publishes a message or answer while the waiter's arm word — in the wire
 * this side owns ({@link Wire#armDirect}) — is set, and takes the arm as it does (one byte per arm).
 * So a peer's write wakes the waiting thread itself: no node thread, progress thread or condition in
 * between, and no system call while the waiter is awake (unarmed).
 *
 * <p>The side that opened the connection may arm only once it has read the peer's first byte, which
 * the peer writes when it has taken the connection: before that, nobody would ring. A connection the
 * peer closed (its queue pair destroyed, its process dead) reads end-of-stream: the doorbell is dead
 * and its waiters go back to the device's doorbells.
 */
final class DirectDoorbell implements WakeChannel {
    private final Wire own;
    private final String name;
    private volatile SocketChannel channel;
    private volatile boolean confirmed;
    private volatile boolean dead;
    private final AtomicReference<Object> holder = new AtomicReference<>();
    private final ByteBuffer ringByte = ByteBuffer.allocateDirect(1);
    private final ByteBuffer drainBuf = ByteBuffer.allocateDirect(64);
    private final AtomicLong rings = new AtomicLong();
    /** The queue pair whose link this belongs to, for {@link #quiet}; set once linked. */
    private volatile SoftQueuePair queuePair;

    DirectDoorbell(Wire own, String name) {
        this.own = own;
        this.name = name;
    }

    /** The opening side: the connection is ours, usable once the peer's first byte came. */
    void opened(SocketChannel ch) {
        if (ch == null) {
            return;
        }
        channel = ch;
        if (dead) {
            closeQuietly(ch); // unlinked meanwhile
        }
    }

    /** The taking side: the peer opened it; our first byte tells the peer it may arm. */
    boolean taken(SocketChannel ch) {
        if (dead || channel != null) {
            return false;
        }
        channel = ch;
        confirmed = true;
        if (!ring()) {
            return false;
        }
        if (dead) {
            closeQuietly(ch); // unlinked meanwhile
        }
        return true;
    }

    @Override
    public SelectableChannel channel() {
        return channel;
    }

    @Override
    public boolean claim(Object waiter) {
        if (dead || channel == null) {
            return false;
        }
        if (!confirmed && !(drain() && confirmed)) {
            return false;
        }
        Object h = holder.get();
        if (h == waiter) {
            return true;
        }
        if (h == null && holder.compareAndSet(null, waiter)) {
            own.enterDirect();
            return true;
        }
        return false;
    }

    @Override
    public void release(Object waiter) {
        if (holder.get() == waiter) {
            own.leaveDirect();
            holder.compareAndSet(waiter, null);
        }
    }

    @Override
    public void arm(boolean sendsToo, int wait) {
        own.armDirect(sendsToo, wait);
        java.lang.invoke.VarHandle.fullFence();
    }

    void queuePair(SoftQueuePair qp) {
        queuePair = qp;
    }

    @Override
    public boolean quiet(boolean sendsToo) {
        SoftQueuePair qp = queuePair;
        return qp != null && !dead && qp.xpQuiet(sendsToo);
    }

    @Override
    public boolean disarm() {
        return own.disarmDirect();
    }

    @Override
    public boolean drain() {
        SocketChannel ch = channel;
        if (ch == null || dead) {
            return false;
        }
        synchronized (drainBuf) {
            try {
                for (;;) {
                    drainBuf.clear();
                    int n = ch.read(drainBuf);
                    if (n < 0) {
                        die();
                        return false;
                    }
                    if (n > 0) {
                        confirmed = true;
                    }
                    if (n < drainBuf.capacity()) {
                        return true;
                    }
                }
            } catch (IOException e) {
                die();
                return false;
            }
        }
    }

    /**
     * Rings the peer's waiter (after taking its arm): one byte.
     *
     * @return false when the connection is unusable (the caller rings the device doorbell instead)
     */
    boolean ring() {
        SocketChannel ch = channel;
        if (ch == null || dead) {
            return false;
        }
        synchronized (ringByte) {
            try {
                ringByte.clear();
                ch.write(ringByte); // 0 only when the peer left many rings unread: it wakes anyway
                rings.incrementAndGet();
                return true;
            } catch (IOException e) {
                die();
                return false;
            }
        }
    }

    /** Rings this side wrote. */
    long rings() {
        return rings.get();
    }

    private void die() {
        if (!dead) {
            dead = true;
            SoftDevice.TRACE.message(TraceLevel.INTERNALS, "xp.directDead", name);
            closeQuietly(channel);
        }
    }

    /** Unlinked: closes the connection (the peer's end reads end-of-stream). */
    void close() {
        dead = true;
        own.leaveDirect();
        closeQuietly(channel);
    }

    boolean usable() {
        return !dead && confirmed && channel != null;
    }

    private static void closeQuietly(SocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                SoftDevice.TRACE.record(TraceLevel.INTERNALS, "xp.directCloseFailed", e);
            }
        }
    }

    @Override
    public String toString() {
        return "DirectDoorbell[" + name + (dead ? ", dead" : confirmed ? "" : ", unconfirmed") + "]";
    }
}
