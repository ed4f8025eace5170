package io.jsdp.provider;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.ras.LeakDetector;
import java.io.IOException;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * Leak detection for the provider's channels (issue 10): a {@link SdpSocketChannel} or
 * {@link SdpServerSocketChannel} — and so a {@link java.net.Socket} or {@link java.net.ServerSocket} over
 * {@link SdpSocketImpl}, which lives in one — that becomes garbage while open is closed by a cleaner
 * and reported with where it was opened ({@link LeakDetector}: log, flight recorder, FFDC
 * {@code leak.CHANNEL} / {@code leak.SERVER_CHANNEL}).
 *
 * <p>Each channel keeps one of the holders below and writes its engine objects and TCP delegates into
 * it as it gets them; the cleaner holds the holder, never the channel. A leaked connection is closed
 * as the JDK's cleaner closes a leaked socket's file descriptor: an ordinary close (DisConn, then the
 * resources go once the peer answers or the close timer fires; abortive if unread data is left).
 */
final class ChannelLeaks {
    /** Every channel of the provider; frames of jsdp's own modules are never the opener. */
    static final LeakDetector DETECTOR = new LeakDetector("jsdp channels", ChannelLeaks.class, SdpConnection.class);

    private ChannelLeaks() {
    }

    /** What a stream channel holds, for the cleaner. Written by the channel under its state lock. */
    static final class StreamResources implements LeakDetector.Cleanup {
        volatile SdpConnection sdp;
        volatile SocketChannel tcp;
        /**
         * Run when a leaked channel is cleaned: takes it out of {@link SocketRegistry} (which holds channels
         * weakly; a strong reference there would keep a dropped channel from ever becoming garbage).
         */
        volatile Runnable onLeak;

        @Override
        public String release() {
            StringBuilder what = new StringBuilder(64);
            Runnable r = onLeak;
            if (r != null) {
                r.run();
            }
            SdpConnection c = sdp;
            if (c != null) {
                c.close();
                what.append("SDP connection ").append(c.id()).append(" closed (").append(c.state()).append(')');
            }
            SocketChannel t = tcp;
            if (t != null) {
                try {
                    t.close();
                    what.append(what.length() == 0 ? "" : ", ").append("TCP delegate closed");
                } catch (IOException e) {
                    what.append(what.length() == 0 ? "" : ", ").append("TCP delegate close failed: ").append(e);
                }
            }
            return what.length() == 0 ? "nothing was open under it" : what.toString();
        }
    }

    /** What a server channel holds, for the cleaner. */
    static final class ServerResources implements LeakDetector.Cleanup {
        volatile SdpListener sdp;
        final ServerSocketChannel tcp;
        final Selector waiter;
        /** As {@link StreamResources#onLeak}. */
        volatile Runnable onLeak;

        ServerResources(ServerSocketChannel tcp, Selector waiter) {
            this.tcp = tcp;
            this.waiter = waiter;
        }

        @Override
        public String release() {
            StringBuilder what = new StringBuilder(64);
            Runnable r = onLeak;
            if (r != null) {
                r.run();
            }
            SdpListener l = sdp;
            if (l != null) {
                l.close();
                what.append("SDP listener closed, ");
            }
            try {
                tcp.close();
                waiter.close();
                what.append("TCP listener closed");
            } catch (IOException e) {
                what.append("TCP listener close failed: ").append(e);
            }
            return what.toString();
        }
    }
}
