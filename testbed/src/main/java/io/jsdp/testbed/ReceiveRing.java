package io.jsdp.testbed;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A queue pair's receive queue: posting threads of the owner produce, the requester executing the
 * peer's messages consumes. Lock-free between the two sides, so a message and a repost do not bounce
 * a lock's cache line between cores.
 *
 * <ul>
 *   <li>Posters claim position {@code t} by a CAS of {@code post} (several threads may post), fill the
 *       slot, then publish it by storing the slot's {@code seq = t + 1} with a volatile store.</li>
 *   <li>The consumer (one at a time: it holds the owner's {@code rqLock}) reads the slot at
 *       {@code cons}; it is there when {@code seq == cons + 1} (acquire). After using it the consumer
 *       advances {@code cons} (release), which frees the slot: a poster claims {@code t} only while
 *       {@code t - cons < limit}.</li>
 * </ul>
 * Post-side and consume-side counters sit on separate cache lines.
 *
 * <p>The volatile publication is one half of the RNR-kick handshake: the consumer that finds no receive
 * marks its requester stalled (volatile) and looks again; the poster publishes (volatile) and then
 * reads the requester's stall. One of them always sees the other, so no receive is posted unseen while
 * a send waits out an RNR timer.
 */
final class ReceiveRing extends RingFields {
    static final VarHandle SEQ;
    private static final VarHandle POST;
    private static final VarHandle CONS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            SEQ = MethodHandles.privateLookupIn(RecvWqe.class, l).findVarHandle(RecvWqe.class, "seq", long.class);
            POST = l.findVarHandle(RingPost.class, "post", long.class);
            CONS = l.findVarHandle(RingCons.class, "cons", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RecvWqe[] slots;
    private final int mask;
    private final int limit;

    ReceiveRing(int limit, int maxSge) {
        int size = Integer.highestOneBit(Math.max(1, limit - 1)) << 1;
        this.slots = new RecvWqe[size];
        this.mask = size - 1;
        this.limit = limit;
        for (int i = 0; i < size; i++) {
            slots[i] = new RecvWqe(maxSge);
        }
    }

    // ---------------------------------------------------------------- posting side (any owner thread)

    /**
     * Claims the next slot for a post.
     *
     * @return the claimed position, or -1 when {@code limit} receives are outstanding
     */
    long claim() {
        while (true) {
            long t = (long) POST.getOpaque(this);
            // The consumer's counter is on the consumer's cache line: read it only when the cached
            // value says the ring may be full.
            if (t - consCache >= limit) {
                consCache = (long) CONS.getAcquire(this);
                if (t - consCache >= limit) {
                    return -1;
                }
            }
            if (POST.compareAndSet(this, t, t + 1)) {
                return t;
            }
        }
    }

    RecvWqe slot(long position) {
        return slots[(int) position & mask];
    }

    /** Publishes a claimed, filled slot (volatile: see the RNR-kick handshake in the class doc). */
    void publish(long position) {
        SEQ.setVolatile(slot(position), position + 1);
    }

    // ---------------------------------------------------------------- consuming side (holds rqLock)

    /** The next receive, or null when none is published. */
    RecvWqe peek() {
        long c = (long) CONS.getOpaque(this);
        RecvWqe r = slots[(int) c & mask];
        return (long) SEQ.getAcquire(r) == c + 1 ? r : null;
    }

    /** Frees the receive {@link #peek()} returned, after its last use. */
    void advance() {
        CONS.setRelease(this, (long) CONS.getOpaque(this) + 1);
    }

    /** Receives posted and not consumed (a racy count when posts are in flight). */
    int posted() {
        return (int) ((long) POST.getAcquire(this) - (long) CONS.getAcquire(this));
    }
}

/** Padding before the posters' counter. */
abstract class RingPad0 {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

/** The posters' claim counter, and their cached copy of the consumer's (racy: only ever too low). */
abstract class RingPost extends RingPad0 {
    volatile long post;
    long consCache;
}

/** Padding between posters and consumer. */
abstract class RingPad1 extends RingPost {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}

/** The consumer's counter. */
abstract class RingCons extends RingPad1 {
    volatile long cons;
}

/** Padding after the consumer's counter. */
abstract class RingFields extends RingCons {
    long p20, p21, p22, p23, p24, p25, p26, p27;
}
