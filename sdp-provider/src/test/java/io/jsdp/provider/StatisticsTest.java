package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.SdpMXBean;
import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketInfo;
import io.jsdp.SdpSocketOptions;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import javax.management.JMX;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The provider's statistics in one JVM: fallbacks counted by reason, the live-socket registry (SDP and
 * TCP, listeners; closed and dropped sockets leave it), the MXBean, the dump and the fallback's
 * Flight Recorder events. Its own JVM (surefire forks per class), so the counts start at zero.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StatisticsTest {
    private static final SelectorProvider JDK = SelectorProvider.provider();
    private static final SelectorProvider JSDP = new SdpSelectorProvider();
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private static SocketChannel connect(SelectorProvider p, java.net.SocketAddress to) throws java.io.IOException {
        SocketChannel c = p.openSocketChannel();
        c.connect(to);
        return c;
    }

    private static SdpSocketInfo info(SocketChannel c) {
        for (SdpSocketInfo i : SocketRegistry.describeAll()) {
            try {
                String local = SocketRegistry.endpoint((InetSocketAddress) c.getLocalAddress());
                if (i.getKind().equals("stream") && i.getLocal().equals(local)) {
                    return i;
                }
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }
        return null;
    }

    private static void exchange(SocketChannel a, SocketChannel b, int bytes) throws Exception {
        ByteBuffer out = ByteBuffer.allocate(bytes);
        while (out.hasRemaining()) {
            a.write(out);
        }
        ByteBuffer in = ByteBuffer.allocate(bytes);
        while (in.hasRemaining()) {
            assertTrue(b.read(in) >= 0);
        }
    }

    @Test
    void fallbacksAreCountedByReasonAndListedWithTheirBytes() throws Exception {
        Map<String, Long> before = SocketRegistry.fallbacks();
        try (ServerSocketChannel plain = JDK.openServerSocketChannel().bind(LOOPBACK);
             SocketChannel client = JSDP.openSocketChannel()) {
            client.connect(plain.getLocalAddress());
            try (SocketChannel peer = plain.accept()) {
                assertTrue(client.getOption(SdpSocketOptions.TRANSPORT).startsWith("tcp (no SDP listener at"),
                    client.getOption(SdpSocketOptions.TRANSPORT));
                exchange(client, peer, 3000);
                exchange(peer, client, 700);
                SdpSocketInfo i = info(client);
                assertNotNull(i, SocketRegistry.describeAll().toString());
                assertEquals("tcp", i.getTransport());
                assertEquals("no-listener", i.getFallbackKind());
                assertTrue(i.getReason().startsWith("no SDP listener at"), i.getReason());
                assertEquals("ESTABLISHED", i.getState());
                assertEquals(SocketRegistry.endpoint((InetSocketAddress) peer.getLocalAddress()), i.getRemote());
                assertEquals(3000, i.getBytesSent());
                assertEquals(700, i.getBytesReceived());
                assertEquals(-1, i.getCredits());
            }
        }
        try (ServerSocketChannel plain = JDK.openServerSocketChannel().bind(LOOPBACK);
             SocketChannel client = JSDP.openSocketChannel()) {
            client.setOption(SdpSocketOptions.USE_SDP, false);
            client.connect(plain.getLocalAddress());
            plain.accept().close();
        }
        try (ServerSocketChannel server = JSDP.openServerSocketChannel().bind(LOOPBACK);
             SocketChannel plainClient = connect(JDK, server.getLocalAddress());
             SocketChannel accepted = server.accept()) {
            assertEquals("tcp (the peer connected over TCP)", accepted.getOption(SdpSocketOptions.TRANSPORT));
            assertEquals("peer-tcp", info(accepted).getFallbackKind());
            assertTrue(plainClient.isConnected());
        }
        Map<String, Long> after = SocketRegistry.fallbacks();
        assertEquals(before.getOrDefault("no-listener", 0L) + 1, after.get("no-listener"), after.toString());
        assertEquals(before.getOrDefault("socket-option", 0L) + 1, after.get("socket-option"), after.toString());
        assertEquals(before.getOrDefault("peer-tcp", 0L) + 1, after.get("peer-tcp"), after.toString());
        assertTrue(SocketRegistry.tcpSent() >= 3000 && SocketRegistry.tcpReceived() >= 700);
    }

    @Test
    void fallbackReasonsSortIntoKinds() {
        assertEquals(Fallback.NO_LISTENER, Fallback.of("no SDP listener at /127.0.0.1:9"));
        assertEquals(Fallback.UNREACHABLE, Fallback.of("no RDMA route to /10.0.0.1:9"));
        assertEquals(Fallback.TIMEOUT, Fallback.of("SDP connect to /10.0.0.1:9 timed out"));
        assertEquals(Fallback.RULE, Fallback.of("rules: connect 10.0.0.0/8 * tcp (line 3)"));
        assertEquals(Fallback.SOCKET_OPTION, Fallback.of("SDP turned off on this socket"));
        assertEquals(Fallback.NO_DEVICE, Fallback.of("no RDMA device: none"));
        assertEquals(Fallback.PEER_TCP, Fallback.of("the peer connected over TCP"));
        assertEquals(Fallback.LISTEN_FAILED, Fallback.of("SDP listen failed: cannot claim RDMA CM port 9 host-wide"));
        assertEquals(Fallback.NO_RESOURCES, Fallback.of("no SDP resources: cannot allocate 4096 bytes of shared device memory"));
        assertEquals(Fallback.OTHER, Fallback.of("something new"));
    }

    @Test
    void sdpConnectionsAndListenersAreListedAndLeaveWhenClosed() throws Exception {
        SdpSocketInfo server;
        long connectionId;
        try (ServerSocketChannel listener = JSDP.openServerSocketChannel().bind(LOOPBACK);
             SocketChannel client = connect(JSDP, listener.getLocalAddress());
             SocketChannel accepted = listener.accept()) {
            assertTrue(client.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
            exchange(client, accepted, 100_000);
            SdpSocketInfo c = info(client);
            SdpSocketInfo a = info(accepted);
            assertEquals("sdp", c.getTransport());
            assertEquals("ESTABLISHED", c.getState());
            assertEquals("credit", c.getFlowControl());
            assertTrue(c.getCredits() > 0, c.toString());
            assertEquals(100_000, c.getBytesSent());
            assertEquals(100_000, a.getBytesReceived());
            assertEquals(c.getLocal(), a.getRemote());
            assertEquals(c.getRemote(), a.getLocal());
            assertTrue(c.getConnectionId() > 0);
            connectionId = c.getConnectionId();
            server = SocketRegistry.describeAll().stream().filter(i -> i.getKind().equals("listen")).findFirst().orElseThrow();
            assertEquals("sdp+tcp", server.getTransport());
            assertEquals("LISTEN", server.getState());
            assertEquals(SocketRegistry.endpoint((InetSocketAddress) listener.getLocalAddress()), server.getLocal());

            String dump = SdpManagement.dumpText();
            assertTrue(dump.contains("connection " + connectionId + " active"), dump);
            assertTrue(dump.contains("--- flight recorder"), dump);
            assertTrue(dump.contains("--- FFDC records in memory"), dump);
        }
        assertTrue(SocketRegistry.describeAll().stream().noneMatch(i -> i.getId() == server.getId()
            || i.getConnectionId() == connectionId), SocketRegistry.describeAll().toString());
    }

    @Test
    void theRegistryDoesNotKeepADroppedChannelAlive() throws Exception {
        WeakReference<SocketChannel> ref = new WeakReference<>(JSDP.openSocketChannel());
        int listed = SocketRegistry.size();
        assertTrue(listed >= 1);
        for (int i = 0; i < 100 && ref.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertNull(ref.get(), "the registry kept an unreferenced channel alive");
        SocketRegistry.describeAll(); // purges the entry
        assertTrue(SocketRegistry.size() < listed, "the collected channel's entry was purged");
    }

    /** The JVM's MXBean, once registered (registration runs on a thread of its own: up to 10 s). */
    private static SdpMXBean registeredMxBean() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = new ObjectName(SdpMXBean.OBJECT_NAME);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!server.isRegistered(name)) {
            assertTrue(System.nanoTime() < deadline, "not registered: " + SdpManagement.registrationProblem());
            Thread.sleep(10);
        }
        return JMX.newMXBeanProxy(server, name, SdpMXBean.class);
    }

    @Test
    void theMxBeanIsRegisteredAndAnswers() throws Exception {
        try (ServerSocketChannel listener = JSDP.openServerSocketChannel().bind(LOOPBACK);
             SocketChannel client = connect(JSDP, listener.getLocalAddress());
             SocketChannel accepted = listener.accept()) {
            exchange(client, accepted, 5000);
            SdpMXBean proxy = registeredMxBean();
            assertTrue(proxy.getDevice().contains("soft"), proxy.getDevice());
            assertTrue(proxy.getBytesSent() >= 5000);
            assertTrue(proxy.getSdpConnectionsLive() >= 2);
            SdpSocketInfo[] sockets = proxy.getSockets();
            assertTrue(sockets.length >= 3, List.of(sockets).toString());
            assertTrue(List.of(sockets).stream().anyMatch(i -> i.getTransport().equals("sdp") && i.getBytesSent() == 5000));
            assertTrue(proxy.dump().contains("jsdp dump: pid " + ProcessHandle.current().pid()));
            // this JVM runs jsdp from the class path, without the agent, so Netty is not touched
            assertEquals("left alone (jsdp's agent did not install the provider in this JVM)", proxy.getNettyNativeTransports());
            assertTrue(proxy.dump().contains("\nnetty native transports: left alone (jsdp's agent did not install"), proxy.dump());
        }
    }

    @Test
    void rnrRetriesOfANicAssistedConnectionReachTheSocketListAndTheMxBean() throws Exception {
        try (ServerSocketChannel listener = JSDP.openServerSocketChannel()) {
            listener.setOption(SdpSocketOptions.FLOW_CONTROL, "nic");
            listener.bind(LOOPBACK);
            SocketChannel client = JSDP.openSocketChannel();
            client.setOption(SdpSocketOptions.FLOW_CONTROL, "nic");
            client.connect(listener.getLocalAddress());
            try (client; SocketChannel accepted = listener.accept()) {
                assertEquals("nic", client.getOption(SdpSocketOptions.FLOW_CONTROL));
                int total = 8 << 20;
                Thread writer = new Thread(() -> {
                    try {
                        ByteBuffer out = ByteBuffer.allocate(total);
                        while (out.hasRemaining()) {
                            client.write(out);
                        }
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }, "nic-writer");
                writer.setDaemon(true);
                writer.start();
                // a stall fails with both sides' state (and the writer's stack) instead of the test's timeout
                ByteBuffer in = ByteBuffer.allocate(total);
                AtomicReference<String> stalled = new AtomicReference<>();
                java.io.Closeable reader = accepted;
                Thread watchdog = new Thread(() -> {
                    try {
                        Thread.sleep(TimeUnit.SECONDS.toMillis(40));
                        stalled.set(SdpManagement.dumpText() + "writer at " + java.util.Arrays.toString(writer.getStackTrace()));
                        reader.close();
                    } catch (InterruptedException | java.io.IOException e) {
                        // the reads ended in time
                    }
                }, "nic-watchdog");
                watchdog.setDaemon(true);
                watchdog.start();
                try {
                    // a slow reader: 4 KiB every 2 ms, until the writer's sends have waited for its buffers
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    SdpSocketInfo c = info(client);
                    while (c.getRnrRetries() <= 0 && in.position() < in.capacity() && System.nanoTime() < until) {
                        in.limit(Math.min(in.capacity(), in.position() + 4096));
                        assertTrue(accepted.read(in) >= 0);
                        Thread.sleep(2);
                        c = info(client);
                    }
                    assertTrue(c.getRnrRetries() > 0, "sends beyond the reader's buffers waited in the device: " + c + "\n"
                        + SdpManagement.dumpText());
                    assertEquals(0, info(accepted).getRnrRetries(), "the reader's credit updates always found a buffer");
                    SdpMXBean proxy = registeredMxBean();
                    assertTrue(proxy.getRnrRetries() >= c.getRnrRetries(), "the JVM's total: " + proxy.getRnrRetries());
                    in.limit(in.capacity());
                    while (in.hasRemaining()) {
                        assertTrue(accepted.read(in) >= 0);
                    }
                } catch (ClosedChannelException e) { // closed by the watchdog, during a read or before one
                    fail("the stream stalled after " + in.position() + " of " + total + " bytes:\n" + stalled.get());
                } finally {
                    watchdog.interrupt();
                }
                writer.join(TimeUnit.SECONDS.toMillis(20));
                assertFalse(writer.isAlive());
            }
        }
    }

    @Test
    void fallbackAndTcpLifecycleEventsAreRecorded(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("fallback.jfr");
        InetSocketAddress target;
        try (Recording r = new Recording()) {
            r.enable("io.jsdp.Fallback");
            r.enable("io.jsdp.ConnectionEstablished");
            r.enable("io.jsdp.ConnectionClosed");
            r.start();
            try (ServerSocketChannel plain = JDK.openServerSocketChannel().bind(LOOPBACK)) {
                target = (InetSocketAddress) plain.getLocalAddress();
                try (SocketChannel client = connect(JSDP, target); SocketChannel peer = plain.accept()) {
                    exchange(client, peer, 1234);
                }
            }
            r.stop();
            r.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> fallbacks = ofType(events, "io.jsdp.Fallback");
        assertEquals(1, fallbacks.size(), events.toString());
        assertEquals("no-listener", fallbacks.get(0).getString("kind"));
        assertTrue(fallbacks.get(0).getString("reason").startsWith("no SDP listener at"));
        assertEquals(SocketRegistry.endpoint(target), fallbacks.get(0).getString("address"));
        List<RecordedEvent> established = ofType(events, "io.jsdp.ConnectionEstablished").stream()
            .filter(e -> "tcp".equals(e.getString("transport"))).collect(Collectors.toList());
        assertEquals(1, established.size(), events.toString());
        assertEquals(SocketRegistry.endpoint(target), established.get(0).getString("remote"));
        assertTrue(established.get(0).getBoolean("active"));
        List<RecordedEvent> closed = ofType(events, "io.jsdp.ConnectionClosed").stream()
            .filter(e -> "tcp".equals(e.getString("transport"))).collect(Collectors.toList());
        assertEquals(1, closed.size(), events.toString());
        assertEquals(1234, closed.get(0).getLong("bytesSent"));
        assertFalse(ofType(events, "io.jsdp.ConnectionEstablished").stream().anyMatch(e -> "sdp".equals(e.getString("transport"))));
    }

    private static List<RecordedEvent> ofType(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).collect(Collectors.toList());
    }
}
