package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Non-blocking connect, accept, read and write driven by one selector, as Netty and Jetty drive them:
 * over the JDK's channels and selector first, then over jsdp's (SDP on SoftRdma), and jsdp's selector
 * with SDP and JDK channels in it at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NonBlockingConformanceTest extends ConformanceBase {





    /** One event loop: accept, connect, then the client writes "ping", the server answers "pong". */
    private String pingPong(SelectorProvider p, SocketChannel[] clientOut) throws IOException {
        Selector sel = track(p.openSelector());
        ServerSocketChannel server = track(p.openServerSocketChannel());
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        server.configureBlocking(false);
        server.register(sel, SelectionKey.OP_ACCEPT, "server");
        SocketChannel client = track(p.openSocketChannel());
        client.configureBlocking(false);
        clientOut[0] = client;
        boolean connected = client.connect(server.getLocalAddress());
        client.register(sel, connected ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT, "client");
        ByteBuffer reply = ByteBuffer.allocate(4);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (reply.hasRemaining()) {
            assertTrue(System.nanoTime() < deadline, "event loop stalled");
            sel.select(1_000);
            for (Iterator<SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext();) {
                SelectionKey k = it.next();
                it.remove();
                if (k.isAcceptable()) {
                    SocketChannel accepted = server.accept();
                    if (accepted != null) {
                        track(accepted);
                        accepted.configureBlocking(false);
                        accepted.register(sel, SelectionKey.OP_READ, ByteBuffer.allocate(4));
                    }
                } else if (k.isConnectable()) {
                    assertTrue(client.finishConnect(), "finishConnect after OP_CONNECT");
                    assertFalse(client.isConnectionPending());
                    k.interestOps(SelectionKey.OP_WRITE);
                } else if ("client".equals(k.attachment()) && k.isWritable()) {
                    client.write(ByteBuffer.wrap("ping".getBytes(StandardCharsets.US_ASCII)));
                    k.interestOps(SelectionKey.OP_READ);
                } else if ("client".equals(k.attachment()) && k.isReadable()) {
                    client.read(reply);
                } else if (k.isReadable()) {
                    SocketChannel ch = (SocketChannel) k.channel();
                    ByteBuffer in = (ByteBuffer) k.attachment();
                    ch.read(in);
                    if (!in.hasRemaining()) {
                        ch.write(ByteBuffer.wrap("pong".getBytes(StandardCharsets.US_ASCII)));
                        k.interestOps(0);
                    }
                }
            }
        }
        return new String(reply.array(), StandardCharsets.US_ASCII);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void acceptConnectReadAndWriteThroughOneSelector(String kind) throws Exception {
        SocketChannel[] client = new SocketChannel[1];
        assertEquals("pong", pingPong(provider(kind), client));
        if (kind.equals("jsdp")) {
            String t = client[0].getOption(SdpSocketOptions.TRANSPORT);
            assertTrue(t.startsWith("sdp"), t);
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aRefusedNonBlockingConnectFailsInFinishConnectAndClosesTheChannel(String kind) throws Exception {
        ServerSocketChannel s = JDK.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        InetSocketAddress nobody = (InetSocketAddress) s.getLocalAddress();
        s.close();
        SocketChannel c = track(provider(kind).openSocketChannel());
        c.configureBlocking(false);
        Selector sel = track(provider(kind).openSelector());
        boolean now;
        try {
            now = c.connect(nobody);
        } catch (ConnectException refusedAtOnce) {
            assertFalse(c.isOpen());
            return;
        }
        assertFalse(now);
        c.register(sel, SelectionKey.OP_CONNECT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        IOException failure = null;
        while (failure == null && System.nanoTime() < deadline) {
            sel.select(200);
            sel.selectedKeys().clear();
            try {
                if (c.finishConnect()) {
                    break;
                }
            } catch (IOException e) {
                failure = e;
            }
        }
        assertTrue(failure instanceof ConnectException, String.valueOf(failure));
        assertFalse(c.isOpen());
    }

    @Test
    void aNonBlockingJsdpClientFallsBackToATcpServerThroughTheSelector() throws Exception {
        ServerSocketChannel tcpOnly = track(JDK.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        SocketChannel c = track(JSDP.openSocketChannel());
        c.configureBlocking(false);
        Selector sel = track(JSDP.openSelector());
        assertFalse(c.connect(tcpOnly.getLocalAddress()));
        SelectionKey k = c.register(sel, SelectionKey.OP_CONNECT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean done = false;
        while (!done && System.nanoTime() < deadline) {
            if (sel.select(200) > 0 && k.isConnectable()) {
                // Netty throws an Error when finishConnect is false after OP_CONNECT: the SDP refusal must not
                // be reported as OP_CONNECT, only the TCP connect's end
                assertTrue(c.finishConnect(), "OP_CONNECT means finishConnect() is true");
                done = true;
            }
            sel.selectedKeys().clear();
        }
        assertTrue(done);
        assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("tcp (no SDP listener"));
        SocketChannel accepted = track(tcpOnly.accept());
        assertNotNull(accepted);
        k.interestOps(SelectionKey.OP_READ);
        accepted.write(ByteBuffer.wrap(new byte[] {7}));
        assertEquals(1, sel.select(5_000));
        assertTrue(k.isReadable());
        ByteBuffer b = ByteBuffer.allocate(1);
        assertEquals(1, c.read(b));
    }

    @Test
    void oneJsdpSelectorServesSdpChannelsAndJdkChannelsTogether() throws Exception {
        Selector sel = track(JSDP.openSelector());
        // an SDP pair
        ServerSocketChannel server = track(JSDP.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        SocketChannel client = track(JSDP.openSocketChannel());
        assertTrue(client.connect(server.getLocalAddress()));
        SocketChannel accepted = track(server.accept());
        assertTrue(accepted.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
        accepted.configureBlocking(false);
        SelectionKey sdpKey = accepted.register(sel, SelectionKey.OP_READ, "sdp");
        // a JDK datagram channel
        DatagramChannel rx = track(DatagramChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        rx.configureBlocking(false);
        SelectionKey udpKey = rx.register(sel, SelectionKey.OP_READ, "udp");
        assertEquals(0, sel.selectNow());
        client.write(ByteBuffer.wrap(new byte[] {1}));
        DatagramChannel tx = track(DatagramChannel.open());
        tx.send(ByteBuffer.wrap(new byte[] {2}), rx.getLocalAddress());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (sel.selectedKeys().size() < 2 && System.nanoTime() < deadline) {
            sel.select(1_000);
        }
        assertTrue(sdpKey.isReadable());
        assertTrue(udpKey.isReadable());
        // a blocked select wakes for SDP data alone
        sel.selectedKeys().clear();
        assertEquals(1, accepted.read(ByteBuffer.allocate(4)));
        rx.receive(ByteBuffer.allocate(4));
        assertEquals(0, sel.selectNow());
        Thread writer = new Thread(() -> {
            try {
                Thread.sleep(200);
                client.write(ByteBuffer.wrap(new byte[] {3}));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        writer.start();
        long t0 = System.nanoTime();
        assertEquals(1, sel.select(10_000));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "woken by the SDP data, not the timeout");
        assertTrue(sdpKey.isReadable());
        writer.join();
    }
}
