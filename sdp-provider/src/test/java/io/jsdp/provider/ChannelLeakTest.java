package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 10, leak detection across the stack: a channel, a server channel or a {@code java.net.Socket} over
 * {@link SdpSocketImpl} dropped while open is closed by the cleaner — the peer sees the end of the
 * stream, the engine connection and its device resources (queue pair, completion queue, memory region,
 * device memory, connection-manager id) are released, it leaves the registry {@code jsdp.jar stat} lists — and
 * it is reported with the method that opened it.
 * Runs at the default {@code jsdp.leakDetection} (sampled), so the opener frame is what every channel gets.
 */
@Timeout(120)
class ChannelLeakTest {
    private static final SelectorProvider JSDP = new SdpSelectorProvider();
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    /** Collects garbage until {@code done}, at most about 30 s; true when done. */
    private static boolean gcUntil(BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 300 && !done.getAsBoolean(); i++) {
            System.gc();
            Thread.sleep(100);
        }
        return done.getAsBoolean();
    }

    private static boolean waitUntil(BooleanSupplier done) throws InterruptedException {
        for (int i = 0; i < 300 && !done.getAsBoolean(); i++) {
            Thread.sleep(50);
        }
        return done.getAsBoolean();
    }

    private static ByteBuffer ascii(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
    }

    /** Opens a jsdp channel to {@code server}, checks it is on SDP, writes, and drops it open. */
    private static void connectChannelAndDrop(InetSocketAddress server, String transportPrefix) throws Exception {
        SocketChannel c = JSDP.openSocketChannel();
        c.connect(server);
        assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith(transportPrefix), c.getOption(SdpSocketOptions.TRANSPORT));
        c.write(ascii("hello"));
    }

    /** The same through a {@code java.net.Socket} over {@link SdpSocketImpl}. */
    private static void connectSocketAndDrop(InetSocketAddress server) throws Exception {
        Socket s = new SocketImplConformanceTest.JsdpSocket();
        s.connect(server);
        assertTrue(s.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), s.getOption(SdpSocketOptions.TRANSPORT));
        s.getOutputStream().write("hello".getBytes(StandardCharsets.US_ASCII));
    }

    private static void bindServerAndDrop() throws Exception {
        ServerSocketChannel s = JSDP.openServerSocketChannel();
        s.bind(LOOPBACK);
        assertTrue(s.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp+tcp"), s.getOption(SdpSocketOptions.TRANSPORT));
    }

    /** The one leak record about {@code what} whose opener is {@code opener} (the tests share the JVM's FFDC records). */
    private static FfdcRecord record(String kind, String opener, String what) {
        List<FfdcRecord> records = Ffdc.find(kind, "opened at io.jsdp.provider.ChannelLeakTest." + opener + "(ChannelLeakTest.java:")
            .stream().filter(r -> r.summary().contains(what)).toList();
        assertEquals(1, records.size(), () -> "one " + kind + " record about " + what + " opened in " + opener + ": "
            + Ffdc.recent());
        return records.get(0);
    }

    /** Drops an SDP stream end made by {@code dropper}; checks the peer, the resources and the report. */
    private void checkSdpStreamLeak(String opener, Dropper dropper) throws Exception {
        SdpStack stack = SdpRuntime.stack();
        long leaksBefore = ChannelLeaks.DETECTOR.leaksDetected();
        InetSocketAddress address;
        try (ServerSocketChannel server = JSDP.openServerSocketChannel().bind(LOOPBACK)) {
            address = (InetSocketAddress) server.getLocalAddress();
            int connectionsBefore = stack.openConnections();
            int registeredBefore = SocketRegistry.size();
            int resourcesBefore = stack.rdmaDevice().resources().openCount();
            dropper.drop((InetSocketAddress) server.getLocalAddress());
            try (SocketChannel peer = server.accept()) {
                assertTrue(peer.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
                assertEquals(connectionsBefore + 2, stack.openConnections(), "both ends of the connection in this JVM");
                assertTrue(stack.rdmaDevice().resources().openCount() > resourcesBefore);
                ByteBuffer got = ByteBuffer.allocate(5);
                while (got.hasRemaining()) {
                    assertTrue(peer.read(got) > 0);
                }
                assertEquals(ascii("hello"), got.flip());

                assertTrue(gcUntil(() -> ChannelLeaks.DETECTOR.leaksDetected() > leaksBefore), "the cleaner never ran");

                assertEquals(-1, peer.read(ByteBuffer.allocate(1)), "the peer sees the end of the stream");
            }
            assertTrue(waitUntil(() -> SocketRegistry.size() == registeredBefore),
                () -> "the dropped channel left the registry of live sockets (jsdp.jar stat): " + SocketRegistry.size());
            assertTrue(waitUntil(() -> stack.openConnections() == connectionsBefore),
                () -> "engine connections of the dropped channel and its peer: " + stack.openConnections());
            assertTrue(waitUntil(() -> stack.rdmaDevice().resources().openCount() == resourcesBefore),
                () -> "device resources: " + stack.rdmaDevice().resources().report());
        }
        FfdcRecord r = record("leak.CHANNEL", opener, "(to " + address + ", ");
        assertEquals("leak", r.component());
        assertTrue(r.summary().startsWith("io.jsdp.provider.SdpSocketChannel (to /127.0.0.1:"), r.summary());
        assertTrue(r.summary().contains(", sdp flowControl=credit device="), r.summary());
        assertTrue(r.snapshot().contains("closed by the cleaner: SDP connection "), r.snapshot());
    }

    @FunctionalInterface
    private interface Dropper {
        void drop(InetSocketAddress server) throws Exception;
    }

    @Test
    void anSdpChannelDroppedOpenIsClosedItsResourcesReleasedAndReportedWithItsOpener() throws Exception {
        checkSdpStreamLeak("connectChannelAndDrop", a -> connectChannelAndDrop(a, "sdp"));
    }

    @Test
    void aSocketOverSdpSocketImplDroppedOpenIsClosedItsResourcesReleasedAndReportedWithItsOpener() throws Exception {
        checkSdpStreamLeak("connectSocketAndDrop", ChannelLeakTest::connectSocketAndDrop);
    }

    @Test
    void aTcpFallbackChannelDroppedOpenClosesItsDelegate() throws Exception {
        long leaksBefore = ChannelLeaks.DETECTOR.leaksDetected();
        InetSocketAddress address;
        try (ServerSocketChannel server = SelectorProvider.provider().openServerSocketChannel().bind(LOOPBACK)) {
            address = (InetSocketAddress) server.getLocalAddress();
            connectChannelAndDrop(address, "tcp (no SDP listener");
            try (SocketChannel peer = server.accept()) {
                assertTrue(gcUntil(() -> ChannelLeaks.DETECTOR.leaksDetected() > leaksBefore), "the cleaner never ran");
                ByteBuffer got = ByteBuffer.allocate(6);
                while (peer.read(got) >= 0) {
                    assertTrue(got.position() <= 5, "only the hello");
                }
                assertEquals(ascii("hello"), got.flip(), "the data, then the end of the stream");
            }
        }
        FfdcRecord r = record("leak.CHANNEL", "connectChannelAndDrop", "(to " + address + ", ");
        assertTrue(r.summary().contains(", tcp (no SDP listener at "), r.summary());
        assertTrue(r.snapshot().contains("closed by the cleaner: TCP delegate closed"), r.snapshot());
    }

    @Test
    void aServerChannelDroppedOpenStopsListening() throws Exception {
        SdpStack stack = SdpRuntime.stack();
        long leaksBefore = ChannelLeaks.DETECTOR.leaksDetected();
        int resourcesBefore = stack.rdmaDevice().resources().openCount();
        bindServerAndDrop();
        assertTrue(gcUntil(() -> ChannelLeaks.DETECTOR.leaksDetected() > leaksBefore), "the cleaner never ran");
        FfdcRecord r = record("leak.SERVER_CHANNEL", "bindServerAndDrop", "");
        assertTrue(r.summary().startsWith("io.jsdp.provider.SdpServerSocketChannel (listening on /127.0.0.1:"), r.summary());
        assertTrue(r.snapshot().contains("closed by the cleaner: SDP listener closed, TCP listener closed"), r.snapshot());
        assertTrue(waitUntil(() -> stack.rdmaDevice().resources().openCount() == resourcesBefore),
            () -> "device resources: " + stack.rdmaDevice().resources().report());
    }
}
