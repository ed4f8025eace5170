package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The other end of {@link TwoJvmConformanceTest}, in a JVM of its own: blocking channels of one provider
 * ({@code jdk}, {@code jsdp} or {@code jsdp-disni}, the first argument), driven by one command a line on stdin, one answer a
 * line on stdout: {@code OK <command> <value>} or {@code EX <command> <exception class> <message>}.
 * Connections are numbered from 0 in the order they were accepted or connected; {@code RESET} closes
 * everything and starts the numbering again. Stdin's end ends the process.
 *
 * <pre>
 * LISTEN             bind a server on loopback, value: its port     UNLISTEN    close it
 * ACCEPT | CONNECT p accept / connect to loopback:p, value: TRANSPORT (spaces as '_') or '-'
 * ECHO i n           echo n bytes on connection i, reading at most 7,777 bytes at a time
 * WRITE i n          write n pattern bytes ({@link #pattern(int)})
 * READ i n           read exactly n bytes, value: their CRC-32      READ1 i   one read, value: its count
 * READD i n          as READ, into a 1 MiB direct buffer (zero-copy data arrives by RDMA READ)
 * WRITES i           write 1,000 bytes every 10 ms, 50 times or until it fails
 * SHUTOUT i | SHUTIN i | CLOSE i | RESET
 * LINGER i s         set SO_LINGER to s seconds
 * NETCONNECT p       a java.net.Socket to loopback:p (jsdp: through {@link SocketFactories}, so SdpSocketImpl),
 *                    value: TRANSPORT or '-'; java.net sockets are numbered apart, from 0
 * NETWRITE i n       write n pattern bytes through socket i's OutputStream        NETCLOSE i   close it
 * EXIT               answer, then System.exit(0) with whatever is open as it is (shutdown hooks run)
 * HALT               answer, then Runtime.halt(0): a crash (no hooks, nothing closed)
 * </pre>
 */
public final class ConformancePeer {
    private final SelectorProvider provider;
    private final List<SocketChannel> conns = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final boolean jsdp;
    private boolean factoriesInstalled;
    private ServerSocketChannel server;

    private ConformancePeer(SelectorProvider provider, boolean jsdp) {
        this.provider = provider;
        this.jsdp = jsdp;
    }

    /**
     * Runs the peer.
     *
     * @param args {@code jdk}, {@code jsdp}, or {@code jsdp-disni} (jsdp with its SDP stack on {@link DisniChain})
     * @throws Exception when stdin fails or the DiSNI chain cannot be installed
     */
    public static void main(String[] args) throws Exception {
        if (args[0].equals("jsdp-disni")) {
            DisniChain.install();
        }
        SelectorProvider p = args[0].equals("jdk") ? SelectorProvider.provider() : new SdpSelectorProvider();
        ConformancePeer peer = new ConformancePeer(p, !args[0].equals("jdk"));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("READY " + ProcessHandle.current().pid());
        for (String line; (line = in.readLine()) != null;) {
            String[] w = line.trim().split(" ");
            String answer;
            try {
                answer = "OK " + w[0] + " " + peer.run(w);
            } catch (Exception e) {
                answer = "EX " + w[0] + " " + e.getClass().getName() + " " + e.getMessage();
            }
            System.out.println(answer);
            if (answer.equals("OK EXIT ")) {
                System.exit(0);
            }
            if (answer.equals("OK HALT ")) {
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
        }
        peer.reset();
    }

    /**
     * The bytes {@code WRITE} sends.
     *
     * @param n how many
     * @return {@code n} bytes, byte {@code i} being {@code i * 31 + 7}
     */
    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    /**
     * The value {@code READ} answers with.
     *
     * @param b the bytes read
     * @return their CRC-32
     */
    static long crc(byte[] b) {
        CRC32 crc = new CRC32();
        crc.update(b);
        return crc.getValue();
    }

    private String run(String[] w) throws Exception {
        switch (w[0]) {
            case "LISTEN" -> {
                server = provider.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                return Integer.toString(((InetSocketAddress) server.getLocalAddress()).getPort());
            }
            case "UNLISTEN" -> {
                server.close();
                return "";
            }
            case "ACCEPT" -> {
                return add(server.accept());
            }
            case "CONNECT" -> {
                SocketChannel c = provider.openSocketChannel();
                conns.add(c);
                c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(w[1])));
                return transport(c);
            }
            case "RESET" -> {
                reset();
                return "";
            }
            case "EXIT", "HALT" -> {
                return "";
            }
            case "NETCONNECT" -> {
                if (jsdp && !factoriesInstalled) {
                    SocketFactories.install(); // java.net sockets become SdpSocketImpl ones
                    factoriesInstalled = true;
                }
                Socket s = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(w[1]));
                sockets.add(s);
                return s.supportedOptions().contains(SdpSocketOptions.TRANSPORT)
                    ? s.getOption(SdpSocketOptions.TRANSPORT).replace(' ', '_') : "-";
            }
            case "NETWRITE" -> {
                int n = Integer.parseInt(w[2]);
                sockets.get(Integer.parseInt(w[1])).getOutputStream().write(pattern(n));
                return Integer.toString(n);
            }
            case "NETCLOSE" -> {
                sockets.get(Integer.parseInt(w[1])).close();
                return "";
            }
            default -> {
                return onConnection(w[0], conns.get(Integer.parseInt(w[1])), w.length > 2 ? Integer.parseInt(w[2]) : 0);
            }
        }
    }

    private String onConnection(String command, SocketChannel c, int n) throws Exception {
        switch (command) {
            case "ECHO" -> {
                ByteBuffer b = ByteBuffer.allocate(7_777);
                for (int left = n; left > 0;) {
                    b.clear();
                    int got = c.read(b);
                    if (got < 0) {
                        throw new IOException("EOF with " + left + " to echo");
                    }
                    left -= got;
                    b.flip();
                    while (b.hasRemaining()) {
                        c.write(b);
                    }
                }
                return Integer.toString(n);
            }
            case "WRITE" -> {
                ByteBuffer b = ByteBuffer.wrap(pattern(n));
                while (b.hasRemaining()) {
                    c.write(b);
                }
                return Integer.toString(n);
            }
            case "READ" -> {
                ByteBuffer b = ByteBuffer.allocate(n);
                while (b.hasRemaining()) {
                    if (c.read(b) < 0) {
                        throw new IOException("EOF after " + b.position() + " of " + n);
                    }
                }
                return Long.toString(crc(b.array()));
            }
            case "READD" -> {
                // into a direct buffer, so zero-copy data arrives by RDMA READ (a heap buffer refuses it)
                ByteBuffer d = ByteBuffer.allocateDirect(1 << 20);
                CRC32 crc = new CRC32();
                for (int left = n; left > 0;) {
                    d.clear().limit(Math.min(d.capacity(), left));
                    int got = c.read(d);
                    if (got < 0) {
                        throw new IOException("EOF with " + left + " to read");
                    }
                    d.flip();
                    crc.update(d);
                    left -= got;
                }
                return Long.toString(crc.getValue());
            }
            case "READ1" -> {
                return Integer.toString(c.read(ByteBuffer.allocate(64)));
            }
            case "WRITES" -> {
                for (int i = 0; i < 50; i++) {
                    c.write(ByteBuffer.wrap(new byte[1000]));
                    Thread.sleep(10);
                }
                return "all written";
            }
            case "SHUTOUT" -> c.shutdownOutput();
            case "SHUTIN" -> c.shutdownInput();
            case "CLOSE" -> c.close();
            case "LINGER" -> c.setOption(StandardSocketOptions.SO_LINGER, n);
            default -> throw new IllegalArgumentException("unknown command " + command);
        }
        return "";
    }

    private String add(SocketChannel c) throws IOException {
        conns.add(c);
        return transport(c);
    }

    private static String transport(SocketChannel c) throws IOException {
        if (!c.supportedOptions().contains(SdpSocketOptions.TRANSPORT)) {
            return "-";
        }
        return c.getOption(SdpSocketOptions.TRANSPORT).replace(' ', '_');
    }

    private void reset() throws IOException {
        for (SocketChannel c : conns) {
            c.close();
        }
        conns.clear();
        for (Socket s : sockets) {
            s.close();
        }
        sockets.clear();
        if (server != null) {
            server.close();
            server = null;
        }
    }
}
