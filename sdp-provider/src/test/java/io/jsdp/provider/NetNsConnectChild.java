package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * The child JVM of {@link ListenerAddressConformanceTest}, run in another network namespace: connects to
 * an address and port with the JDK's channels, then with jsdp's, and prints each outcome on a line
 * ({@code jdk ...}, {@code jsdp ...}).
 */
public final class NetNsConnectChild {
    private NetNsConnectChild() {
    }

    /**
     * Connects.
     *
     * @param args the address and the port
     * @throws Exception when the address is bad
     */
    public static void main(String[] args) throws Exception {
        InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1]));
        System.out.println("jdk " + connect(SelectorProvider.provider(), to));
        System.out.println("jsdp " + connect(new SdpSelectorProvider(), to));
        System.out.flush();
        System.exit(0);
    }

    private static String connect(SelectorProvider p, InetSocketAddress to) {
        try (SocketChannel c = p.openSocketChannel()) {
            c.connect(to);
            return "connected " + (c instanceof SdpSocketChannel ? c.getOption(SdpSocketOptions.TRANSPORT) : "tcp");
        } catch (IOException e) {
            return "connect failed: " + e.getClass().getName();
        }
    }
}
