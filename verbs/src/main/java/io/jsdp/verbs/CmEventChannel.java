package io.jsdp.verbs;

/**
 * A connection-manager event channel ({@code struct rdma_event_channel}): the events of every id
 * created on it, in order.
 */
public interface CmEventChannel extends AutoCloseable {

    /**
     * Takes the next event, waiting up to {@code timeoutNs} ({@code rdma_get_cm_event}). Events need no
     * acknowledgement.
     *
     * @param timeoutNs the longest wait; 0 does not wait
     * @return the event, or null when the time ran out
     * @throws InterruptedException when the thread is interrupted while waiting
     * @throws VerbsException when the channel is closed
     */
    CmEvent poll(long timeoutNs) throws InterruptedException, VerbsException;

    /**
     * Destroys the channel.
     *
     * @throws VerbsException {@link Errno#EBUSY} while ids still use it
     */
    @Override
    void close() throws VerbsException;
}
