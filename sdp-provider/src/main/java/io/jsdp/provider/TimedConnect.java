package io.jsdp.provider;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;

/**
 * A connect with a timeout, for the socket adaptor and {@link SdpSocketImpl}: the channel's
 * non-blocking connect (SDP first, TCP fallback as usual) waited for in a private selector, the channel
 * put back in blocking mode afterwards. The wait is cut in slices so a close from another thread is
 * seen within {@link #SLICE_MS}.
 */
final class TimedConnect {
    /** The longest single wait in the selector; a close from another thread is noticed within it. */
    static final long SLICE_MS = 100;

    private TimedConnect() {
    }

    /**
     * Connects, closing the channel when the connect fails or times out.
     *
     * @param ch a blocking, unconnected channel
     * @param remote where to
     * @param timeoutNs the longest wait; 0 waits for ever
     * @param interruptible true for channel semantics (an interrupt closes the channel and throws
     *     {@link ClosedByInterruptException}); false for {@code java.net} semantics on a platform thread
     *     (the interrupt does not end the connect; the status is kept)
     * @throws SocketTimeoutException when the time ran out
     * @throws AsynchronousCloseException when another thread closed the channel meanwhile
     * @throws IOException as {@code SocketChannel.connect} and {@code finishConnect}
     */
    static void connect(SdpSocketChannel ch, SocketAddress remote, long timeoutNs, boolean interruptible) throws IOException {
        boolean interrupted = false;
        try {
            ch.configureBlocking(false);
            if (ch.connect(remote)) {
                return;
            }
            long start = System.nanoTime();
            try (Selector selector = ch.provider().openSelector()) {
                ch.register(selector, SelectionKey.OP_CONNECT);
                for (;;) {
                    if (ch.finishConnect()) {
                        return; // closing the selector deregisters the channel before blocking mode comes back
                    }
                    long leftNs = timeoutNs == 0 ? Long.MAX_VALUE : timeoutNs - (System.nanoTime() - start);
                    if (leftNs <= 0) {
                        throw new SocketTimeoutException("Connect timed out");
                    }
                    if (!interruptible) {
                        interrupted |= Thread.interrupted(); // else select returns at once
                    }
                    selector.select(Math.max(1, Math.min(SLICE_MS, TimeUnit.NANOSECONDS.toMillis(leftNs))));
                    selector.selectedKeys().clear();
                    if (interruptible && Thread.currentThread().isInterrupted()) {
                        ch.close();
                        throw new ClosedByInterruptException();
                    }
                    if (!ch.isOpen()) {
                        throw new AsynchronousCloseException();
                    }
                }
            }
        } catch (IOException e) {
            ch.close(); // as the JDK: a failed connect closes the channel
            throw e;
        } finally {
            if (ch.isOpen()) {
                ch.configureBlocking(true);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
