package io.jsdp.provider;

import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/** Opens the provider's stream channels (their constructors stay package-private). */
public final class Channels {
    private Channels() {
    }

    /**
     * Opens an SDP-capable stream channel.
     *
     * @param provider the provider it belongs to
     * @param jdk the JDK's provider, for the TCP fallback
     * @return the unconnected channel
     */
    public static SocketChannel openStream(SelectorProvider provider, SelectorProvider jdk) {
        return new SdpSocketChannel(provider, jdk);
    }

    /**
     * Opens an SDP-and-TCP server channel.
     *
     * @param provider the provider it belongs to
     * @param jdk the JDK's provider, for the TCP half
     * @return the unbound channel
     * @throws IOException when the TCP half cannot be opened
     */
    public static ServerSocketChannel openServer(SelectorProvider provider, SelectorProvider jdk) throws IOException {
        return new SdpServerSocketChannel(provider, jdk);
    }
}
