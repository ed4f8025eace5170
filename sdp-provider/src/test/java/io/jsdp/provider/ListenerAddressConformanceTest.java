package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSocketOptions;
import io.jsdp.testbed.shm.ChildJvm;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 29: a listener takes the connections TCP's would, and the accepted socket and its client report
 * the addresses TCP's do. Each case binds a listener (127.0.0.1, ::1, the IPv4 and the IPv6 wildcard, and
 * the JDK's default wildcard) and connects to a loopback address (127.0.0.1, 127.0.0.2, ::1) over the
 * JDK's channels first, then over jsdp's: same outcome, refused or connected, and the same addresses on
 * both ends; a jsdp connection that TCP makes is on SDP. A client bound before it connects connects
 * from the address and port it bound (the wildcard: the address routing picks). Then network namespaces: a namespace the test
 * creates (with a veth pair to it) has its own loopback and ports, so a client there that connects to
 * its 127.0.0.1 does not reach a listener of this namespace (refused, as TCP), while this namespace's
 * own address on the veth reaches a wildcard listener here over SDP. The namespace and its veth are
 * removed on every exit path; and a listener in that namespace is reached from here at its veth address
 * over SDP, as TCP reaches it, with TCP's addresses on both ends. Only loopback and the test's own veth
 * addresses are ever connected to.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListenerAddressConformanceTest extends ConformanceBase {
    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (String bind : List.of("127.0.0.1", "::1", "0.0.0.0", "::", "default")) {
            for (String to : List.of("127.0.0.1", "127.0.0.2", "::1")) {
                all.add(Arguments.of(bind, to));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "listener on {0}, connect to {1}")
    @MethodSource("cases")
    void aConnectReachesTheListenerTcpWouldWithTheAddressesTcpReports(String bind, String to) throws Exception {
        String jdk = connect("jdk", bind, null, to);
        String jsdp = connect("jsdp", bind, null, to);
        assertEquals(jdk, jsdp, "jsdp against the JDK's channels");
    }

    static Stream<Arguments> boundClients() {
        List<Arguments> all = new ArrayList<>();
        for (String from : List.of("127.0.0.1", "127.0.0.2", "0.0.0.0")) {
            for (String to : List.of("127.0.0.1", "127.0.0.2")) {
                all.add(Arguments.of(from, to));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "client bound to {0}, connect to {1}")
    @MethodSource("boundClients")
    void aClientBoundBeforeItConnectsConnectsFromWhereItBound(String from, String to) throws Exception {
        String jdk = connect("jdk", "default", from, to);
        String jsdp = connect("jsdp", "default", from, to);
        assertEquals(jdk, jsdp, "jsdp against the JDK's channels");
    }

    /**
     * Binds a listener of {@code kind} to {@code bind}, and a client to {@code from} (when not null, port
     * 0), then connects to {@code to}: how it ended and the addresses.
     */
    private String connect(String kind, String bind, String from, String to) throws Exception {
        SelectorProvider p = provider(kind);
        ServerSocketChannel s = track(p.openServerSocketChannel());
        try {
            s.bind(bind.equals("default") ? null : new InetSocketAddress(InetAddress.getByName(bind), 0));
        } catch (IOException e) {
            return "bind failed: " + e.getClass().getName();
        }
        int port = ((InetSocketAddress) s.getLocalAddress()).getPort();
        CompletableFuture<SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return s.accept();
            } catch (IOException e) {
                return null; // closed after a refused connect
            }
        }, TestThreads.POOL);
        SocketChannel c = track(p.openSocketChannel());
        int boundPort = 0;
        if (from != null) {
            c.bind(new InetSocketAddress(InetAddress.getByName(from), 0));
            boundPort = ((InetSocketAddress) c.getLocalAddress()).getPort();
        }
        try {
            c.connect(new InetSocketAddress(InetAddress.getByName(to), port));
        } catch (IOException e) {
            s.close();
            return "connect failed: " + e.getClass().getName();
        }
        SocketChannel a = track(accepted.get(10, TimeUnit.SECONDS));
        if (kind.equals("jsdp")) {
            String transport = c.getOption(SdpSocketOptions.TRANSPORT);
            assertTrue(transport.startsWith("sdp"), transport); // where TCP connects, SDP does
        }
        InetSocketAddress cl = (InetSocketAddress) c.getLocalAddress();
        InetSocketAddress cr = (InetSocketAddress) c.getRemoteAddress();
        InetSocketAddress al = (InetSocketAddress) a.getLocalAddress();
        InetSocketAddress ar = (InetSocketAddress) a.getRemoteAddress();
        assertEquals(cl, ar, kind + ": the client's local address is the accepted socket's remote one");
        assertEquals(cr, al, kind + ": the client's remote address is the accepted socket's local one");
        assertEquals(port, cr.getPort());
        if (from != null) {
            assertEquals(boundPort, cl.getPort(), kind + ": a bound client keeps its port");
        }
        return "connected from " + cl.getAddress().getHostAddress() + " to " + cr.getAddress().getHostAddress();
    }

    @Test
    void anotherNetworkNamespaceHasItsOwnPortsAndItsVethAddressHereReachesAWildcardListener() throws Exception {
        try (NetNs ns = NetNs.create()) {
            for (String kind : List.of("jdk", "jsdp")) {
                SelectorProvider p = provider(kind);
                ServerSocketChannel s = track(p.openServerSocketChannel().bind(null));
                int port = ((InetSocketAddress) s.getLocalAddress()).getPort();
                // this namespace's own veth address is an address of this host: the wildcard listener takes it
                InetSocketAddress here = new InetSocketAddress(ns.hostAddress(), port);
                SocketChannel c = track(p.openSocketChannel());
                assertTrue(c.connect(here), kind);
                SocketChannel a = track(s.accept());
                assertEquals(c.getLocalAddress(), a.getRemoteAddress(), kind);
                assertEquals(here, a.getLocalAddress(), kind);
                if (kind.equals("jsdp")) {
                    String transport = c.getOption(SdpSocketOptions.TRANSPORT);
                    assertTrue(transport.startsWith("sdp"), transport);
                }
                // from the other namespace, its own loopback: nobody listens there, whatever listens here
                try (ChildJvm child = ChildJvm.startWrapped(List.of("ip", "netns", "exec", ns.name()), List.of(),
                    NetNsConnectChild.class, "127.0.0.1", Integer.toString(port))) {
                    String jdk = child.awaitLine("jdk ", 60, TimeUnit.SECONDS);
                    String jsdp = child.awaitLine("jsdp ", 60, TimeUnit.SECONDS);
                    assertEquals("jdk connect failed: java.net.ConnectException", jdk, "the JDK baseline");
                    assertEquals(jdk.substring(4), jsdp.substring(5), kind + " listener: jsdp in the namespace");
                }
            }
        }
    }

    @Test
    void aListenerInAnotherNetworkNamespaceIsReachedOverSdpWhereTcpReachesIt() throws Exception {
        try (NetNs ns = NetNs.create();
             ChildJvm child = ChildJvm.startWrapped(List.of("ip", "netns", "exec", ns.name()), List.of(),
                 NetNsListenChild.class)) {
            List<String> seen = new ArrayList<>();
            for (String kind : List.of("jdk", "jsdp")) {
                int port = Integer.parseInt(child.awaitLine("listening " + kind + " ", 60, TimeUnit.SECONDS).split(" ")[2]);
                InetSocketAddress there = new InetSocketAddress(ns.peerAddress(), port);
                SocketChannel c = track(provider(kind).openSocketChannel());
                assertTrue(c.connect(there), kind);
                // accepted <kind> <local> <remote> <transport>
                String[] accepted = child.awaitLine("accepted " + kind + " ", 30, TimeUnit.SECONDS).split(" ");
                InetSocketAddress cl = (InetSocketAddress) c.getLocalAddress();
                assertEquals(there.getAddress().getHostAddress() + ":" + port, accepted[2], kind + ": accepted local");
                assertEquals(cl.getAddress().getHostAddress() + ":" + cl.getPort(), accepted[3], kind + ": accepted remote");
                if (kind.equals("jsdp")) {
                    String transport = c.getOption(SdpSocketOptions.TRANSPORT);
                    assertTrue(transport.startsWith("sdp"), transport); // where TCP reaches, SDP does
                    assertTrue(accepted[4].startsWith("sdp"), accepted[4]);
                }
                seen.add(cl.getAddress().getHostAddress());
                c.close();
            }
            assertEquals(seen.get(0), seen.get(1), "the client's source address, JDK and jsdp");
            assertEquals(ns.hostAddress().getHostAddress(), seen.get(0), "this namespace's end of the veth");
        }
    }

    /** A network namespace with a veth pair to it, removed (with the pair) on close. */
    static final class NetNs implements AutoCloseable {
        /** Makes each namespace of this JVM a name, veth pair and subnet of its own. */
        private static final AtomicInteger CREATED = new AtomicInteger();

        private final String name;
        private final String hostVeth;
        private final InetAddress hostAddress;
        private final InetAddress peerAddress;

        private NetNs(String name, String hostVeth, InetAddress hostAddress, InetAddress peerAddress) {
            this.name = name;
            this.hostVeth = hostVeth;
            this.hostAddress = hostAddress;
            this.peerAddress = peerAddress;
        }

        static NetNs create() throws IOException {
            long pid = ProcessHandle.current().pid();
            int n = CREATED.getAndIncrement() % 4;
            String name = "jsdp-t" + pid + "-" + n;
            // a /30 of 10.213.0.0/16 chosen by the pid and the count: tests of several JVMs do not collide
            int net = (int) ((pid % 4_000) * 4 + n) * 4;
            String host = "10.213." + (net >> 8) + "." + ((net & 0xff) + 1);
            String peer = "10.213." + (net >> 8) + "." + ((net & 0xff) + 2);
            String vh = "jv" + pid % 100_000 + "n" + n + "h";
            String vp = "jv" + pid % 100_000 + "n" + n + "p";
            run("ip", "netns", "add", name);
            NetNs ns = new NetNs(name, vh, InetAddress.getByName(host), InetAddress.getByName(peer));
            try {
                run("ip", "-n", name, "link", "set", "lo", "up");
                run("ip", "link", "add", vh, "type", "veth", "peer", "name", vp);
                run("ip", "link", "set", vp, "netns", name);
                run("ip", "addr", "add", host + "/30", "dev", vh);
                run("ip", "link", "set", vh, "up");
                run("ip", "-n", name, "addr", "add", peer + "/30", "dev", vp);
                run("ip", "-n", name, "link", "set", vp, "up");
                return ns;
            } catch (IOException | RuntimeException | AssertionError e) {
                ns.close();
                throw e;
            }
        }

        String name() {
            return name;
        }

        /** This namespace's end of the veth pair. */
        InetAddress hostAddress() {
            return hostAddress;
        }

        /** The other namespace's end of the veth pair. */
        InetAddress peerAddress() {
            return peerAddress;
        }

        /**
         * Deletes our end of the veth pair, which takes the other end with it at once, then the namespace
         * (whose own teardown the kernel finishes later).
         */
        @Override
        public void close() throws IOException {
            try {
                if (linkExists(hostVeth)) {
                    run("ip", "link", "del", hostVeth);
                }
            } finally {
                run("ip", "netns", "del", name);
            }
        }

        private static boolean linkExists(String link) throws IOException {
            Process p = new ProcessBuilder("ip", "link", "show", link).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            try {
                return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("ip link show " + link + ": interrupted", e);
            }
        }

        private static void run(String... cmd) throws IOException {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            boolean ended;
            try {
                ended = p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(String.join(" ", cmd) + ": interrupted", e);
            }
            assertTrue(ended, String.join(" ", cmd) + " did not end");
            assertEquals(0, p.exitValue(), () -> String.join(" ", cmd) + ": " + out);
        }
    }
}
