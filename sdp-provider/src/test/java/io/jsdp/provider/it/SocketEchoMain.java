package io.jsdp.provider.it;

import io.jsdp.SdpSocketOptions;
import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Plain {@code java.net} code, as old applications are written: {@code server} prints
 * {@code READY <port>}, echoes one connection through its streams and prints
 * {@code SERVER <transport>}; {@code client <port> <bytes>} sends seeded bytes, checks the echo and
 * prints {@code CLIENT OK <transport>}. The transport is the socket's {@code jsdp.TRANSPORT} option
 * when it has one ({@code -} otherwise).
 */
public final class SocketEchoMain {
    private SocketEchoMain() {
    }

    private static String transport(Socket s) throws Exception {
        if (!s.supportedOptions().contains(SdpSocketOptions.TRANSPORT)) {
            return "-";
        }
        return s.getOption(SdpSocketOptions.TRANSPORT).replace(' ', '_');
    }

    /**
     * Runs one side.
     *
     * @param args {@code server} or {@code client <port> <bytes>}
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            try (ServerSocket ss = new ServerSocket()) {
                ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                System.out.println("READY " + ss.getLocalPort());
                try (Socket s = ss.accept()) {
                    String t = transport(s);
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream();
                    byte[] b = new byte[16 * 1024];
                    for (int n; (n = in.read(b)) >= 0;) {
                        out.write(b, 0, n);
                    }
                    s.shutdownOutput();
                    System.out.println("SERVER " + t);
                }
            }
            return;
        }
        int port = Integer.parseInt(args[1]);
        int bytes = Integer.parseInt(args[2]);
        byte[] data = new byte[bytes];
        new SplittableRandom(port).nextBytes(data);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            Thread writer = new Thread(() -> {
                try {
                    s.getOutputStream().write(data);
                    s.shutdownOutput();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            });
            writer.start();
            byte[] got = new byte[bytes];
            new DataInputStream(s.getInputStream()).readFully(got);
            writer.join();
            if (!Arrays.equals(got, data)) {
                throw new AssertionError("echo differs");
            }
            System.out.println("CLIENT OK " + transport(s));
        }
    }
}
