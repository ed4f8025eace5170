package io.jsdp.provider;

import java.io.IOException;
import java.net.SocketException;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;

/**
 * How the socket adaptors turn channel exceptions into {@code java.net} ones, as the JDK's adaptors do
 * ({@code sun.nio.ch.Net.translateException}): an {@link IOException} from the channel goes through as
 * it is (so a socket from {@code SocketChannel.socket()} may throw {@link ClosedChannelException} or
 * {@link java.nio.channels.ClosedByInterruptException}), the channel's unchecked state exceptions
 * become {@link SocketException}s with the JDK's messages.
 */
final class NetExceptions {
    private NetExceptions() {
    }

    /**
     * Rethrows {@code x} translated as the adaptors' connect, bind, accept and shutdown do.
     *
     * @param x what the channel threw
     * @throws IOException always
     */
    static void translate(Exception x) throws IOException {
        if (x instanceof IOException io) {
            throw io;
        }
        throw toSocketException(x);
    }

    /**
     * The exception an adaptor's option getter or setter throws for {@code x}: a
     * {@link SocketException}, or {@code x} itself when it is unchecked and has no translation.
     *
     * @param x what the channel threw
     * @return the exception to throw
     */
    static SocketException toSocketException(Exception x) {
        if (x instanceof SocketException se) {
            return se;
        }
        String message;
        if (x instanceof ClosedChannelException) {
            message = "Socket is closed";
        } else if (x instanceof NotYetConnectedException) {
            message = "Socket is not connected";
        } else if (x instanceof AlreadyBoundException) {
            message = "Already bound";
        } else if (x instanceof AlreadyConnectedException) {
            message = "Already connected";
        } else if (x instanceof NotYetBoundException) {
            message = "Socket is not bound yet";
        } else if (x instanceof UnsupportedAddressTypeException) {
            message = "Unsupported address type";
        } else if (x instanceof UnresolvedAddressException) {
            message = "Unresolved address";
        } else if (x instanceof IOException) {
            message = x.getMessage();
        } else if (x instanceof RuntimeException r) {
            throw r;
        } else {
            throw new IllegalStateException("untranslated", x);
        }
        SocketException se = new SocketException(message);
        se.initCause(x);
        return se;
    }
}
