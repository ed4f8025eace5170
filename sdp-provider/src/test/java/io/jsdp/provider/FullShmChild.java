package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * {@link FullShmTest}'s child, whose rendezvous directory ({@code jsdp.soft.dir}) lies on a file system
 * too small for a connection: a jsdp server and client connect, exchange bytes both ways and print how
 * they travel and what was counted.
 */
public final class FullShmChild {
    private FullShmChild() {
    }

    /**
     * Runs the exchange.
     *
     * @param args none
     * @throws Exception on any failure (the test sees the stack trace)
     */
    public static void main(String[] args) throws Exception {
        SelectorProvider jsdp = new SdpSelectorProvider();
        try (ServerSocketChannel server = jsdp.openServerSocketChannel()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             SocketChannel client = jsdp.openSocketChannel()) {
            System.out.println("LISTEN " + server.getOption(SdpSocketOptions.TRANSPORT));
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept()) {
                exchange(client, accepted);
                exchange(accepted, client);
                System.out.println("CLIENT " + client.getOption(SdpSocketOptions.TRANSPORT));
                System.out.println("COUNTED " + SocketRegistry.fallbacks());
            }
        }
        System.out.flush();
    }

    private static void exchange(SocketChannel from, SocketChannel to) throws Exception {
        ByteBuffer out = ByteBuffer.wrap(new byte[] {7, 8, 9});
        while (out.hasRemaining()) {
            from.write(out);
        }
        ByteBuffer in = ByteBuffer.allocate(3);
        while (in.hasRemaining()) {
            if (to.read(in) < 0) {
                throw new IllegalStateException("end of stream");
            }
        }
        if (!in.flip().equals(ByteBuffer.wrap(new byte[] {7, 8, 9}))) {
            throw new IllegalStateException("other bytes arrived");
        }
    }
}
