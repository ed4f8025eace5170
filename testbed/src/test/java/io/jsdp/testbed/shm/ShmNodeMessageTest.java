package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * MESSAGE frames of {@link ShmNode}: delivery to the handler of their kind, in order, on the node
 * thread (also to this node itself, never inside the sender); and a malformed frame closes only its
 * connection. Peers are played by raw Unix-domain sockets that speak the frames directly.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class ShmNodeMessageTest {
    private static final long WAIT_S = 5;

    @TempDir
    Path tmp;
    private Rendezvous rendezvous;
    private ShmNode node;
    /** What handlers received: sender, kind, payload, thread. */
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();

    private record Received(NodeId from, int kind, byte[] payload, Thread thread) {
    }

    @BeforeEach
    void open() throws Exception {
        rendezvous = new Rendezvous(tmp.resolve("rv"));
        // No sweep: the made-up peers below are not live processes.
        node = ShmNode.open(rendezvous, ShmSettings.defaults().withPeerCheckMs(3_600_000));
        for (int kind : new int[] {0, 5, ShmNode.MESSAGE_KINDS - 1}) {
            node.setMessageHandler(kind, (from, payload) -> {
                byte[] b = new byte[payload.remaining()];
                payload.get(b);
                received.add(new Received(from, kind, b, Thread.currentThread()));
            });
        }
    }

    @AfterEach
    void close() {
        node.close();
    }

    private Received next() throws InterruptedException {
        Received r = received.poll(WAIT_S, TimeUnit.SECONDS);
        assertNotNull(r, "no message within " + WAIT_S + " s");
        return r;
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 31);
        }
        return b;
    }

    /** A raw connection to the node, named {@code peer} by its HELLO (null: no HELLO). */
    private SocketChannel rawPeer(NodeId peer) throws Exception {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(rendezvous.nodeSocket(node.id())));
        if (peer != null) {
            ByteBuffer f = ByteBuffer.allocate(ShmFrame.LENGTH);
            ShmFrame.put(f, ShmFrame.HELLO, (int) peer.pid(), peer.start());
            write(ch, f.flip());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (!node.peers().contains(peer)) {
                assertTrue(System.nanoTime() < deadline, "HELLO not seen");
                Thread.sleep(2);
            }
        }
        return ch;
    }

    private static void write(SocketChannel ch, ByteBuffer b) throws Exception {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private static ByteBuffer messageFrame(int kind, long length, byte[] payload) {
        ByteBuffer f = ByteBuffer.allocate(ShmFrame.LENGTH + payload.length);
        ShmFrame.put(f, ShmFrame.MESSAGE, kind, length);
        return f.put(payload).flip();
    }

    private static void readFully(SocketChannel ch, ByteBuffer b) throws Exception {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new AssertionError("end of stream after " + b.position() + " bytes");
            }
        }
        b.flip();
    }

    /** A made-up peer id; the node does not sweep, so it need not be a live process. */
    private static NodeId fakePeer(int n) {
        return new NodeId(ProcessHandle.current().pid(), 1_000_000_000L + n);
    }

    @Test
    void messageToThisNodeRunsOnTheNodeThreadInOrderNeverInTheSender() throws Exception {
        long before = node.messagesDelivered();
        for (int i = 0; i < 100; i++) {
            ByteBuffer p = ByteBuffer.wrap(bytes(i + 1, i));
            assertEquals(ShmNode.SENT, node.sendMessage(node.id(), 5, p));
            assertEquals(0, p.position(), "the caller's buffer is not moved");
            p.put(0, (byte) 0x55); // the caller may reuse it at once
        }
        for (int i = 0; i < 100; i++) {
            Received r = next();
            assertEquals(node.id(), r.from());
            assertArrayEquals(bytes(i + 1, i), r.payload(), "message " + i + " in order, as sent");
            assertNotEquals(Thread.currentThread(), r.thread(), "never inside the sender");
            assertTrue(r.thread().getName().startsWith("jsdp-shm-node-"), r.thread().getName());
        }
        assertEquals(100, node.messagesDelivered() - before);
    }

    @Test
    void messageFromAPeerReachesItsHandlerWhateverTheReadsSplit() throws Exception {
        NodeId peer = fakePeer(1);
        try (SocketChannel ch = rawPeer(peer)) {
            byte[] big = bytes(ShmNode.MAX_MESSAGE_BYTES, 3);
            ByteBuffer frames = ByteBuffer.allocate(3 * ShmFrame.LENGTH + big.length + 10);
            frames.put(messageFrame(5, big.length, big));
            frames.put(messageFrame(0, 0, new byte[0]));
            frames.put(messageFrame(ShmNode.MESSAGE_KINDS - 1, 10, bytes(10, 7)));
            frames.flip();
            // Dribble it in: a header split, a payload split, several frames in one write.
            int[] cuts = {7, 16, 20, 2_000, frames.limit()};
            int at = 0;
            for (int cut : cuts) {
                write(ch, frames.duplicate().position(at).limit(cut));
                at = cut;
                Thread.sleep(5);
            }
            Received r = next();
            assertEquals(peer, r.from());
            assertEquals(5, r.kind());
            assertArrayEquals(big, r.payload());
            r = next();
            assertEquals(0, r.kind());
            assertEquals(0, r.payload().length);
            r = next();
            assertEquals(ShmNode.MESSAGE_KINDS - 1, r.kind());
            assertArrayEquals(bytes(10, 7), r.payload());
        }
    }

    @Test
    void messageToAPeerIsOneFrameFollowedByItsPayloadAndOrderSurvivesAFullSocket() throws Exception {
        NodeId peer = fakePeer(2);
        try (SocketChannel ch = rawPeer(peer)) {
            // More than the socket buffers hold while the peer does not read: the rest waits in the node.
            int count = 120;
            for (int i = 0; i < count; i++) {
                ByteBuffer p = ByteBuffer.wrap(bytes(ShmNode.MAX_MESSAGE_BYTES - i, i));
                assertEquals(ShmNode.SENT, node.sendMessage(peer, 5, p));
            }
            for (int i = 0; i < count; i++) {
                ByteBuffer header = ByteBuffer.allocate(ShmFrame.LENGTH);
                readFully(ch, header);
                assertEquals(ShmFrame.MESSAGE, ShmFrame.type(header, 0));
                assertEquals(5, ShmFrame.aux(header, 0));
                assertEquals(ShmNode.MAX_MESSAGE_BYTES - i, ShmFrame.arg(header, 0));
                ByteBuffer payload = ByteBuffer.allocate(ShmNode.MAX_MESSAGE_BYTES - i);
                readFully(ch, payload);
                assertArrayEquals(bytes(ShmNode.MAX_MESSAGE_BYTES - i, i), payload.array(), "message " + i);
            }
        }
    }

    @Test
    void malformedMessageFramesCloseOnlyTheirConnection() throws Exception {
        NodeId good = fakePeer(3);
        try (SocketChannel keeper = rawPeer(good)) {
            ByteBuffer[] bad = {
                messageFrame(5, 3, new byte[] {1, 2, 3}),                        // before HELLO
                messageFrame(5, ShmNode.MAX_MESSAGE_BYTES + 1, new byte[0]),      // too long
                messageFrame(5, -1, new byte[0]),                                 // negative length
                messageFrame(ShmNode.MESSAGE_KINDS, 0, new byte[0]),              // kind out of range
                messageFrame(-1, 0, new byte[0]),                                 // kind out of range
            };
            for (int i = 0; i < bad.length; i++) {
                NodeId peer = i == 0 ? null : fakePeer(10 + i);
                try (SocketChannel ch = rawPeer(peer)) {
                    write(ch, bad[i]);
                    assertEquals(-1, ch.read(ByteBuffer.allocate(16)), "case " + i + ": the node closed the connection");
                }
            }
            assertTrue(node.isOpen());
            // The well-behaved peer was not affected.
            write(keeper, messageFrame(5, 2, new byte[] {4, 2}));
            Received r = next();
            assertEquals(good, r.from());
            assertArrayEquals(new byte[] {4, 2}, r.payload());
            assertTrue(received.isEmpty(), "nothing of the malformed frames was delivered");
        }
    }

    @Test
    void messageOfAKindNobodyHandlesIsDroppedAndAThrowingHandlerIsSurvived() throws Exception {
        node.setMessageHandler(7, (from, payload) -> {
            throw new IllegalStateException("handler bug");
        });
        NodeId peer = fakePeer(4);
        try (SocketChannel ch = rawPeer(peer)) {
            write(ch, messageFrame(6, 1, new byte[] {1})); // kind 6: no handler
            write(ch, messageFrame(7, 1, new byte[] {2})); // throws
            write(ch, messageFrame(5, 1, new byte[] {3}));
            Received r = next();
            assertEquals(5, r.kind(), "the connection and the node thread carry on");
            assertArrayEquals(new byte[] {3}, r.payload());
            assertEquals(ShmNode.SENT, node.sendMessage(node.id(), 5, ByteBuffer.wrap(new byte[] {4})));
            assertArrayEquals(new byte[] {4}, next().payload());
        }
    }

    @Test
    void sendsOutOfRangeAreRefusedAndUnreachableTargetsSaySo() throws Exception {
        ByteBuffer tooBig = ByteBuffer.allocate(ShmNode.MAX_MESSAGE_BYTES + 1);
        assertThrows(IllegalArgumentException.class, () -> node.sendMessage(node.id(), 5, tooBig));
        assertThrows(IllegalArgumentException.class, () -> node.sendMessage(node.id(), ShmNode.MESSAGE_KINDS,
            ByteBuffer.allocate(1)));
        assertThrows(IllegalArgumentException.class, () -> node.setMessageHandler(-1, (f, p) -> { }));
        // No node socket for this one: nobody to deliver to.
        assertEquals(ShmNode.PEER_GONE, node.sendMessage(fakePeer(5), 5, ByteBuffer.allocate(1)));
        node.close();
        assertEquals(ShmNode.NODE_CLOSED, node.sendMessage(node.id(), 5, ByteBuffer.allocate(1)));
    }
}
