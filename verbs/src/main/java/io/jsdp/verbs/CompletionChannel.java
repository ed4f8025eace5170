package io.jsdp.verbs;

/**
 * A completion channel ({@code struct ibv_comp_channel}): armed completion queues attached to it
 * report one event each when a completion arrives. Waiting parks the thread (no monitor, no native
 * wait), so virtual threads keep working.
 */
public interface CompletionChannel extends AutoCloseable {

    /**
     * Waits for the next completion event ({@code ibv_get_cq_event}). Every returned event must be
     * acknowledged with {@link CompletionQueue#acknowledgeEvents}.
     *
     * @param timeoutNs the longest wait in nanoseconds; 0 does not wait
     * @return the queue that had a completion, or null when the time ran out
     * @throws InterruptedException when the waiting thread is interrupted
     * @throws VerbsException when the channel is closed
     */
    CompletionQueue await(long timeoutNs) throws InterruptedException, VerbsException;

    /**
     * Asks the device to hand this channel's events to {@code handler} on the device's own thread that
     * finds them, holding none of the device's locks, instead of queueing them for {@link #await}: the
     * consumer's thread is then not one more thread hand-off between a completion and whoever waits for
     * it (architecture decision 5). An event the handler declines is queued for {@link #await} as usual,
     * so the consumer keeps its waiting thread. A device that cannot dispatch this way (hardware, whose
     * events come from the kernel) returns false and every event goes to {@link #await}.
     *
     * @param handler takes an event on a device thread; it must not block
     * @return whether the device dispatches events to it
     */
    default boolean dispatchTo(EventHandler handler) {
        return false;
    }

    /** Takes completion events where the device finds them ({@link #dispatchTo}). */
    @FunctionalInterface
    interface EventHandler {
        /**
         * Handles one event of {@code cq}, as {@link #await} would have returned it; the handler
         * acknowledges what it takes ({@link CompletionQueue#acknowledgeEvents}).
         *
         * @param cq the queue that fired
         * @return true when handled (and acknowledged); false to have it queued for {@link #await}
         *     instead (nothing acknowledged)
         */
        boolean tryHandle(CompletionQueue cq);
    }

    /**
     * Destroys the channel ({@code ibv_destroy_comp_channel}).
     *
     * @throws VerbsException {@link Errno#EBUSY} while completion queues still use the channel
     */
    @Override
    void close() throws VerbsException;
}
