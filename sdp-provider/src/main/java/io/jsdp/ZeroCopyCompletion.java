package io.jsdp;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Told when a buffer handed over by {@link Sdp#writeZeroCopy} belongs to the application again. It
 * runs once per buffer, in the order the buffers were handed over, from whichever thread makes the
 * channel progress (a later {@code write}, {@code read}, {@code writeZeroCopy}, a selection that polls
 * the channel, or the thread closing it), never on the stack's own threads; keep it short. It may hand
 * over more buffers on the same channel.
 *
 * <p>An exception thrown by {@code completed} does not reach the caller of the call that ran it (a
 * {@code select} included) and harms neither the channel nor the selector, as with a
 * {@link java.nio.channels.CompletionHandler} in the JDK's channel groups: it is handed to the running
 * thread's {@link Thread.UncaughtExceptionHandler}, and the remaining {@code done} calls still run.
 */
@FunctionalInterface
public interface ZeroCopyCompletion {
    /**
     * The channel is done with {@code buffer}: no peer reads it any more, and the application may
     * rewrite, reuse or free it.
     *
     * @param buffer the buffer handed over; on success its position equals its limit
     * @param failure null when every byte was written (read by the peer in place, or copied into the
     *     send buffer after the peer refused zero copy); otherwise why not — the channel was closed
     *     ({@link java.nio.channels.AsynchronousCloseException}) or the connection failed (the exception
     *     a {@code write} would have thrown). A close first collects what the peer had finished, which
     *     succeeds. After a failure the bytes from the buffer's position on were not written by this
     *     side, and the peer may or may not have received some before them (all of them when its
     *     acknowledgement was on the wire as the channel closed).
     */
    void completed(ByteBuffer buffer, IOException failure);
}
