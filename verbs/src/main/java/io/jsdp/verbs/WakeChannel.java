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
    default void arm(boolean sendsToo) {
        arm(sendsToo, newWait());
    }

    /**
     * Arms as {@link #arm(boolean)} does, for wait number {@code wait}: a waiter that waits on several
     * wake channels at once (a selector) arms them all with one number. Of the arms of one wait, the
     * peer rings the channel of the first it takes; the others it takes without a ring while that ring
     * is recent, and the waiter learns of them from {@link #disarm()}. One ring per wait, not one per
     * connection the peer writes to: a selector that slept through a batch of 64 messages was rung 64
     * times (a system call on each side per message).
     *
     * @param sendsToo whether completions of sends must end the wait too
     * @param wait the wait's number ({@link #newWait}), the same for every channel of one wait
     */
    void arm(boolean sendsToo, int wait);

    /**
     * A number for a new wait, for {@link #arm(boolean, int)}: 30 bits, not 0, distinct in this process
     * for the next 2<sup>30</sup> waits (a peer forgets a ring long before).
     *
     * @return the number
     */
    static int newWait() {
        return WaitNumbers.next();
    }

    /**
     * Whether the device knows that a look at the completion queue would find nothing: no completion
     * waits in its queues, and the peer has published no message (and, with {@code sendsToo}, no
     * answer) that this side has not taken. A few reads of memory, against a poll of the queue (which
     * services the queue pair): a selector about to block arms many idle channels, and the look after
     * each arm is this check; only a channel that is not quiet is polled. Called after {@link #arm}, it
     * is the look after the arm (the peer publishes after its check of the arm, or rings); called
     * without an arm, what comes after it is found by the look before the next wait.
     *
     * @param sendsToo whether answers to this side's sends count
     * @return true only when certainly nothing is there; false when something may be (the default)
     */
    default boolean quiet(boolean sendsToo) {
        return false;
    }

    /**
     * Withdraws the arm (a ring may still be on its way: harmless, {@link #drain()} takes it).
     *
     * @return true when the peer took the arm meanwhile: something came for this queue pair, whether
     *     or not its ring came to this channel (see {@link #arm(boolean, int)}); look at it
     */
    boolean disarm();

    /**
     * Consumes the rings waiting in the channel, without blocking.
     *
     * @return false when the channel is dead (the peer closed or died): stop waiting on it
     */
    boolean drain();
}
