package io.jsdp.provider.it;

import io.jsdp.SdpSocketOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.SplittableRandom;

/**
 * An unmodified-application stand-in for the two-JVM tests: plain NIO code that knows nothing of jsdp.
 * {@code server}: listens on loopback, prints {@code READY <port>}, echoes one connection and prints
 * {@code SERVER <provider> <transport>}. {@code client <port> <bytes>}: sends seeded random bytes, checks
 * the echo, prints {@code CLIENT OK <provider> <transport>}. The transport is read from the channel
 * when it is a jsdp channel ({@code -} otherwise).
 */
public final class EchoMain {
    private EchoMain() {
    }

    /**
     * Runs one side.
     *
     * @param args {@code server} or {@code client <port> <bytes>}
     * @throws Exception on any failure (the test sees the stack trace)
     */
    public static void main(String[] args) throws Exception {
        String provider = SelectorProvider.provider().getClass().getName();
        if (args[0].equals("server")) {
            try (ServerSocketChannel s = ServerSocketChannel.open()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                System.out.println("READY " + ((InetSocketAddress) s.getLocalAddress()).getPort());
                try (SocketChannel c = s.accept()) {
                    ByteBuffer b = ByteBuffer.allocate(64 * 1024);
                    while (c.read(b) >= 0) {
                        b.flip();
                        while (b.hasRemaining()) {
                            c.write(b);
                        }
                        b.clear();
                    }
                    System.out.println("SERVER " + provider + " " + transport(c));
                }
            }
            return;
        }
        int port = Integer.parseInt(args[1]);
        int bytes = Integer.parseInt(args[2]);
        byte[] data = new byte[bytes];
        new SplittableRandom(port).nextBytes(data);
        try (SocketChannel c = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
            ByteBuffer got = ByteBuffer.allocate(bytes);
            Thread writer = new Thread(() -> {
                try {
                    ByteBuffer out = ByteBuffer.wrap(data);
                    while (out.hasRemaining()) {
                        c.write(out);
                    }
                    c.shutdownOutput();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            });
            writer.start();
            while (got.hasRemaining() && c.read(got) >= 0) {
                // read the echo
            }
            writer.join();
            if (got.hasRemaining() || !java.util.Arrays.equals(got.array(), data)) {
                throw new AssertionError("echo differs after " + got.position() + " bytes");
            }
            System.out.println("CLIENT OK " + provider + " " + transport(c));
        }
    }

    private static String transport(SocketChannel c) throws Exception {
        if (!c.supportedOptions().contains(SdpSocketOptions.TRANSPORT)) {
            return "-";
        }
        return c.getOption(SdpSocketOptions.TRANSPORT).replace(' ', '_');
    }
}
