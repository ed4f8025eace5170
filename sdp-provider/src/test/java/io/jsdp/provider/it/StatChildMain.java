package io.jsdp.provider.it;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The JVMs {@link StatToolIT} inspects, knowing nothing of jsdp. {@code plain}: a JDK server that takes
 * one connection, reads {@value #TCP_UP} bytes and answers {@value #TCP_DOWN}. {@code app <port>}
 * (run with the agent): a {@code java.net} server and client on this JVM — over SDP — moving
 * {@value #SDP_UP} bytes up and {@value #SDP_DOWN} down, and an NIO client to the plain server at
 * {@code port} — the TCP fallback. {@code nio} (with jsdp as the JVM-wide provider): an NIO server and
 * client over SDP. Each prints {@code READY ...} and then waits to be killed.
 */
public final class StatChildMain {
    static final int TCP_UP = 4321;
    static final int TCP_DOWN = 1234;
    static final int SDP_UP = 10_000;
    static final int SDP_DOWN = 2_500;

    private StatChildMain() {
    }

    /**
     * Runs a role.
     *
     * @param args {@code plain} or {@code app <port>}
     * @throws Exception when anything fails
     */
    public static void main(String[] args) throws Exception {
        InetAddress lo = InetAddress.getLoopbackAddress();
        if (args[0].equals("plain")) {
            try (ServerSocket server = new ServerSocket(0, 50, lo)) {
                System.out.println("READY " + server.getLocalPort());
                try (Socket s = server.accept()) {
                    s.getInputStream().readNBytes(TCP_UP);
                    s.getOutputStream().write(new byte[TCP_DOWN]);
                    s.getOutputStream().flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
            }
            return;
        }
        if (args[0].equals("nio")) {
            try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open()
                     .bind(new InetSocketAddress(lo, 0));
                 SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel accepted = server.accept()) {
                client.write(ByteBuffer.allocate(100));
                ByteBuffer in = ByteBuffer.allocate(100);
                while (in.hasRemaining()) {
                    accepted.read(in);
                }
                System.out.println("READY " + client.getOption(io.jsdp.SdpSocketOptions.TRANSPORT));
                Thread.sleep(Long.MAX_VALUE);
            }
            return;
        }
        int plainPort = Integer.parseInt(args[1]);
        try (ServerSocket server = new ServerSocket(0, 50, lo);
             Socket client = new Socket(lo, server.getLocalPort());
             Socket accepted = server.accept();
             SocketChannel fallback = SocketChannel.open(new InetSocketAddress(lo, plainPort))) {
            OutputStream up = client.getOutputStream();
            up.write(new byte[SDP_UP]);
            up.flush();
            InputStream in = accepted.getInputStream();
            if (in.readNBytes(SDP_UP).length != SDP_UP) {
                throw new IllegalStateException("short SDP read");
            }
            accepted.getOutputStream().write(new byte[SDP_DOWN]);
            accepted.getOutputStream().flush();
            if (client.getInputStream().readNBytes(SDP_DOWN).length != SDP_DOWN) {
                throw new IllegalStateException("short SDP read");
            }
            ByteBuffer out = ByteBuffer.allocate(TCP_UP);
            while (out.hasRemaining()) {
                fallback.write(out);
            }
            ByteBuffer back = ByteBuffer.allocate(TCP_DOWN);
            while (back.hasRemaining()) {
                if (fallback.read(back) < 0) {
                    throw new IllegalStateException("EOF from the plain server");
                }
            }
            System.out.println("READY serverPort=" + server.getLocalPort() + " clientLocalPort=" + client.getLocalPort()
                + " fallbackLocalPort=" + ((InetSocketAddress) fallback.getLocalAddress()).getPort()
                + " transport=" + client.getClass().getName());
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
