package io.jsdp.testbed;

/**
 * Completion events a device thread found while holding queue-pair locks, handed to their channels'
 * {@link io.jsdp.verbs.CompletionChannel#dispatchTo handlers} once it holds none: the event's
 * consumer then runs on the thread that took the peer's doorbell (the shm node thread) or on the
 * device's progress thread, not on one more thread woken for it (issue 27). Only threads between
 * {@link #enter} and {@link #exit} defer; any other thread's events are queued on the channel as
 * before. One per thread, reused: no allocation once its arrays have grown.
 */
final class InlineDispatch {
    private static final ThreadLocal<InlineDispatch> CURRENT = new ThreadLocal<>();

    private SoftCompletionChannel[] channels = new SoftCompletionChannel[8];
    private SoftCompletionQueue[] queues = new SoftCompletionQueue[8];
    private int count;
    private int depth;

    private InlineDispatch() {
    }

    /** The calling thread's dispatch if it is inside {@link #enter}/{@link #exit}, else null. */
    static InlineDispatch current() {
        InlineDispatch d = CURRENT.get();
        return d != null && d.depth > 0 ? d : null;
    }

    /** Starts deferring this thread's events; pair with {@link #exit} in a finally block. */
    static InlineDispatch enter() {
        InlineDispatch d = CURRENT.get();
        if (d == null) {
            d = new InlineDispatch();
            CURRENT.set(d);
        }
        d.depth++;
        return d;
    }

    /** Hands what is deferred to the handlers ({@link #flush}) and stops deferring at the outermost exit. */
    void exit() {
        try {
            if (depth == 1) {
                flush();
            }
        } finally {
            depth--;
        }
    }

    /** Notes an event of {@code cq} for {@code channel}'s handler. */
    void defer(SoftCompletionChannel channel, SoftCompletionQueue cq) {
        if (count == queues.length) {
            channels = java.util.Arrays.copyOf(channels, count * 2);
            queues = java.util.Arrays.copyOf(queues, count * 2);
        }
        channels[count] = channel;
        queues[count++] = cq;
    }

    /**
     * Dispatches every deferred event, in the order found; call holding no queue-pair or queue lock.
     * A handler's own work may find more events (it polls and posts): they are dispatched too.
     */
    void flush() {
        for (int i = 0; i < count; i++) {
            SoftCompletionChannel ch = channels[i];
            SoftCompletionQueue cq = queues[i];
            channels[i] = null;
            queues[i] = null;
            ch.dispatch(cq);
        }
        count = 0;
    }
}
