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
     * Destroys the channel ({@code ibv_destroy_comp_channel}).
     *
     * @throws VerbsException {@link Errno#EBUSY} while completion queues still use the channel
     */
    @Override
    void close() throws VerbsException;
}
