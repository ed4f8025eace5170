package io.jsdp.verbs;

import java.nio.channels.SelectableChannel;

/**
 * A kernel object through which a queue pair's peer wakes the one thread (or selector) that waits for
 * this queue pair, with no thread in between: the peer's publish of a message or answer writes to it
 * when, and only when, the waiter has {@linkplain #arm(boolean) armed} it. A waiter holds it by
 * {@link #claim}, arms it, looks at its completion queue once more (what the peer published before
 * the arm is found there: the arm and the peer's check form a Dekker pair), and then waits for
 * {@link java.nio.channels.SelectionKey#OP_READ} on {@link #channel()} in a JDK selector, which is
 * interruptible and also wakes on whatever else the selector watches. After the wait it
 * {@linkplain #drain() drains} the channel and polls the completion queue itself: the woken thread
 * does the device's work for its queue pair.
 *
 * <p>This is SoftRdma's analogue of a completion channel's file descriptor on hardware, narrowed to
 * one queue pair so that nothing else has to look. Devices that have none return null from
 * {@link QueuePair#wakeChannel()}.
 */
public interface WakeChannel {
    /**
     * The channel to wait on for {@code OP_READ}: non-blocking, a JDK channel (selectable in the
     * JDK's own selectors, whose provider is {@code channel().provider()}).
     *
     * @return the channel
     */
    SelectableChannel channel();

    /**
     * Takes this wake channel for {@code waiter} (a thread or a selector); only the holder arms it.
     *
     * @param waiter who waits
     * @return true when held by {@code waiter} (also when it held it already); false while someone
     *     else holds it, or while it cannot be used (not yet set up, or dead)
     */
    boolean claim(Object waiter);

    /**
     * Gives the wake channel up, withdrawing the holder's arm.
     *
     * @param waiter the holder; others are ignored
     */
    void release(Object waiter);

    /**
     * Announces that the holder is about to wait: the peer's next message to this queue pair (and,
     * with {@code sendsToo}, its next answer, which completes a send) rings the channel once. A
     * volatile store and a full fence; the caller looks at its completion queue afterwards and waits
     * only if that look found nothing. A reader with nothing of its own to send arms without sends: the
     * peer's acknowledgement of the reader's last write then does not wake it just before the answer it
     * waits for.
     *
     * @param sendsToo whether completions of sends must end the wait too
     */
    void arm(boolean sendsToo);

    /** Withdraws the arm (a ring may still be on its way: harmless, {@link #drain()} takes it). */
    void disarm();

    /**
     * Consumes the rings waiting in the channel, without blocking.
     *
     * @return false when the channel is dead (the peer closed or died): stop waiting on it
     */
    boolean drain();
}
