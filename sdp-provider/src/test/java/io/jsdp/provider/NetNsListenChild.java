package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * A child JVM of {@link ListenerAddressConformanceTest}, run in another network namespace: listens on
 * the wildcard with the JDK's channels, then with jsdp's, and for each prints its port
 * ({@code listening <kind> <port>}), accepts one connection and prints the accepted socket's addresses
 * ({@code accepted <kind> <local> <remote> <transport>}).
 */
public final class NetNsListenChild {
    private NetNsListenChild() {
    }

    /**
     * Listens and accepts.
     *
     * @param args none
     * @throws Exception on failure (printed by the JVM; the test sees no line)
     */
    public static void main(String[] args) throws Exception {
        accept("jdk", SelectorProvider.provider());
        accept("jsdp", new SdpSelectorProvider());
        System.out.flush();
        System.exit(0);
    }

    private static void accept(String kind, SelectorProvider p) throws Exception {
        try (ServerSocketChannel s = p.openServerSocketChannel().bind(null)) {
            System.out.println("listening " + kind + " " + ((InetSocketAddress) s.getLocalAddress()).getPort());
            System.out.flush();
            try (SocketChannel a = s.accept()) {
                String transport = a instanceof SdpSocketChannel ? a.getOption(SdpSocketOptions.TRANSPORT) : "tcp";
                System.out.println("accepted " + kind + " " + text(a.getLocalAddress()) + " " + text(a.getRemoteAddress())
                    + " " + transport.replace(' ', '_'));
                System.out.flush();
                a.read(java.nio.ByteBuffer.allocate(1)); // until the test closes its end
            }
        }
    }

    private static String text(java.net.SocketAddress a) {
        InetSocketAddress i = (InetSocketAddress) a;
        return i.getAddress().getHostAddress() + ":" + i.getPort();
    }
}
