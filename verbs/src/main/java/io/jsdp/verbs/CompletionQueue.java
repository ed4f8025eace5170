package io.jsdp.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). Completions of one work queue arrive in posting order.
 * Notification is one-shot: {@link #requestNotify} arms the queue for one event on its channel; the
 * usual idiom is poll until empty, arm, poll once more.
 */
public interface CompletionQueue extends AutoCloseable {

    /**
     * Takes up to {@code max} completions ({@code ibv_poll_cq}). Allocates nothing.
     *
     * @param completions where to write them, from index 0
     * @param max the most to take, at most {@code completions.length}
     * @return how many were written, or a negative {@link Errno} code: {@code -EOVERFLOW} once the queue
     *     overflowed (it is then unusable and its queue pairs are in the error state)
     */
    int poll(WorkCompletion[] completions, int max);

    /**
     * Arms the queue for one event ({@code ibv_req_notify_cq}).
     *
     * @param solicitedOnly when true, only a solicited receive completion or an unsuccessful
     *     completion triggers the event
     * @return {@link Errno#OK}, or an error code when the queue has no channel or is in error
     */
    int requestNotify(boolean solicitedOnly);

    /**
     * Acknowledges events returned by {@link CompletionChannel#await} ({@code ibv_ack_cq_events}).
     *
     * @param count how many
     */
    void acknowledgeEvents(int count);

    /**
     * The number of completions the queue holds before it overflows.
     *
     * @return the capacity
     */
    int capacity();

    /**
     * The channel of this queue.
     *
     * @return the channel, or null when the queue has none
     */
    CompletionChannel channel();

    /**
     * The device's own view of this queue for dumps and first-failure data (completions held, the arm),
     * read without locks; empty where the device tells nothing.
     *
     * @return one line, or an empty string
     */
    default String describeDeviceState() {
        return "";
    }

    /**
     * Destroys the queue ({@code ibv_destroy_cq}).
     *
     * @throws VerbsException {@link Errno#EBUSY} while queue pairs use it or events are unacknowledged
     */
    @Override
    void close() throws VerbsException;
}
