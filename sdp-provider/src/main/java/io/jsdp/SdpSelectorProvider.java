package io.jsdp;

import io.jsdp.provider.Channels;
import io.jsdp.provider.JdkProvider;
import io.jsdp.provider.Rules;
import io.jsdp.provider.Selectors;
import java.io.IOException;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.nio.channels.Channel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;

/**
 * jsdp's {@link SelectorProvider}: install it JVM-wide with
 * {@code -Djava.nio.channels.spi.SelectorProvider=io.jsdp.SdpSelectorProvider} or the agent, or use
 * an instance explicitly.
 *
 * <p>TCP stream channels ({@code openSocketChannel}, {@code openServerSocketChannel}, Internet
 * families) are jsdp's: over SDP where the peer speaks it, over the JDK's TCP otherwise. Datagram,
 * pipe, Unix-domain and inherited channels are the JDK's, and the selector takes both kinds.
 *
 * <p>Each stream channel's {@code socket()} is an adaptor with the channel's state; the agent also
 * installs the {@code java.net} socket factories ({@code io.jsdp.provider.SocketFactories}).
 */
public class SdpSelectorProvider extends SelectorProvider {

    /**
     * Creates the provider; the JDK calls this when the system property names the class. Bad
     * configuration fails here, at start-up, naming the rule or property.
     *
     * @throws IllegalArgumentException for a malformed {@code jsdp.rules} file
     */
    public SdpSelectorProvider() {
        Rules.configured();
    }

    private static SelectorProvider jdk() {
        return JdkProvider.get();
    }

    @Override
    public DatagramChannel openDatagramChannel() throws IOException {
        return jdk().openDatagramChannel();
    }

    @Override
    public DatagramChannel openDatagramChannel(ProtocolFamily family) throws IOException {
        return jdk().openDatagramChannel(family);
    }

    @Override
    public Pipe openPipe() throws IOException {
        return jdk().openPipe();
    }

    @Override
    public AbstractSelector openSelector() throws IOException {
        return Selectors.open(this, jdk());
    }

    @Override
    public ServerSocketChannel openServerSocketChannel() throws IOException {
        return Channels.openServer(this, jdk());
    }

    @Override
    public SocketChannel openSocketChannel() throws IOException {
        return Channels.openStream(this, jdk());
    }

    /** Internet families get SDP-capable channels; Unix-domain channels are the JDK's. */
    @Override
    public SocketChannel openSocketChannel(ProtocolFamily family) throws IOException {
        if (isInternet(family)) {
            return Channels.openStream(this, jdk());
        }
        return jdk().openSocketChannel(family);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel(ProtocolFamily family) throws IOException {
        if (isInternet(family)) {
            return Channels.openServer(this, jdk());
        }
        return jdk().openServerSocketChannel(family);
    }

    private static boolean isInternet(ProtocolFamily family) {
        return family == StandardProtocolFamily.INET || family == StandardProtocolFamily.INET6;
    }

    @Override
    public Channel inheritedChannel() throws IOException {
        return jdk().inheritedChannel();
    }
}
