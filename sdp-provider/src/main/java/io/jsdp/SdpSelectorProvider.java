package io.jsdp;

import io.jsdp.provider.JdkProvider;
import io.jsdp.provider.Selectors;
import java.io.IOException;
import java.net.ProtocolFamily;
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
 * <p><b>Status (issue 6, in progress):</b> its selector multiplexes its own and the JDK's channels
 * with the JDK's semantics; every channel kind is still the JDK's (datagram, pipe, Unix-domain and
 * inherited channels stay so by design; TCP stream channels move onto SDP with the provider's next
 * step, which this class will then open instead).
 */
public class SdpSelectorProvider extends SelectorProvider {

    /** Creates the provider; the JDK calls this when the system property names the class. */
    public SdpSelectorProvider() {
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
        return jdk().openServerSocketChannel();
    }

    @Override
    public SocketChannel openSocketChannel() throws IOException {
        return jdk().openSocketChannel();
    }

    @Override
    public SocketChannel openSocketChannel(ProtocolFamily family) throws IOException {
        return jdk().openSocketChannel(family);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel(ProtocolFamily family) throws IOException {
        return jdk().openServerSocketChannel(family);
    }

    @Override
    public Channel inheritedChannel() throws IOException {
        return jdk().inheritedChannel();
    }
}
