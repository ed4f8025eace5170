package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30 (limits) and issue 28 (a connect storm degrades to TCP), between two JVMs over SoftRdma's
 * shared-memory fabric: connections beyond a JVM's {@code jsdp.limit.connections} are not refused, they
 * go over TCP, counted — on the connecting side when its own stack is full ({@code limit}), and when the
 * listening JVM's is ({@code peer-busy}: its listener rejects the SDP request saying why). Every
 * connection carries its bytes, whichever way it went.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConnectionLimitsTwoJvmTest {
    private static final SelectorProvider JSDP = new SdpSelectorProvider();
    private static final int BYTES = 10_000;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private static long counted(String key) {
        return SocketRegistry.fallbacks().getOrDefault(key, 0L);
    }

    @Test
    void connectionsBeyondTheListeningJvmsCapGoOverTcpCountedAsABusyPeer() throws Exception {
        PeerJvm server = new PeerJvm("jsdp", List.of("-Djsdp.limit.connections=3"));
        open.add(server);
        int port = Integer.parseInt(server.call("LISTEN"));
        long before = counted("peer-busy");
        for (int i = 0; i < 6; i++) {
            SocketChannel c = JSDP.openSocketChannel();
            open.add(c);
            assertTrue(c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)));
            String accepted = server.call("ACCEPT");
            String transport = c.getOption(SdpSocketOptions.TRANSPORT);
            if (i < 3) {
                assertTrue(transport.startsWith("sdp") && accepted.startsWith("sdp"), i + ": " + transport + " / " + accepted);
            } else {
                assertEquals("tcp (SDP peer busy: the SDP listener at " + new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
                    + " refused: it is at its connection limit)", transport, "connection " + i);
                assertTrue(accepted.startsWith("tcp"), accepted);
            }
            ByteBuffer b = ByteBuffer.wrap(ConformancePeer.pattern(BYTES));
            while (b.hasRemaining()) {
                c.write(b);
            }
            assertEquals(Long.toString(ConformancePeer.crc(ConformancePeer.pattern(BYTES))), server.call("READ " + i + " " + BYTES),
                "connection " + i + "'s bytes arrived");
        }
        assertEquals(3, counted("peer-busy") - before, SocketRegistry.fallbacks().toString());
    }

    @Test
    void connectsBeyondTheConnectingJvmsCapGoOverTcpCountedAsALimit() throws Exception {
        PeerJvm client = new PeerJvm("jsdp", List.of("-Djsdp.limit.connections=2"));
        open.add(client);
        ServerSocketChannel server = JSDP.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        open.add(server);
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        for (int i = 0; i < 5; i++) {
            String transport = client.call("CONNECT " + port);
            SocketChannel accepted = server.accept();
            open.add(accepted);
            String here = accepted.getOption(SdpSocketOptions.TRANSPORT);
            if (i < 2) {
                assertTrue(transport.startsWith("sdp") && here.startsWith("sdp"), i + ": " + transport + " / " + here);
            } else {
                assertEquals("tcp_(SDP_limit_reached:_2_SDP_connections_(jsdp.limit.connections))", transport, "connection " + i);
                assertTrue(here.startsWith("tcp"), here);
            }
            assertEquals(Integer.toString(BYTES), client.call("WRITE " + i + " " + BYTES));
            ByteBuffer got = ByteBuffer.allocate(BYTES);
            while (got.hasRemaining()) {
                assertTrue(accepted.read(got) >= 0, "EOF");
            }
            assertArrayEquals(ConformancePeer.pattern(BYTES), got.array(), "connection " + i + "'s bytes arrived");
        }
    }

    @Test
    void statShowsTheLimits() {
        String dump = SdpManagement.dumpText();
        assertTrue(dump.matches("(?s).*\nlimits: (no stack|connections \\d+/16384, in set-up \\d+/256; connects over the limits \\d+, "
            + "requests refused \\d+)\n.*"), dump);
    }
}
