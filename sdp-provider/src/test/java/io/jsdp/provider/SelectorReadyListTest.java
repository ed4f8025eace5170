package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The selector's ready list (the SDP side is polled only for keys that were signalled or found ready
 * the last time), checked against the JDK's behaviour: each case runs over the JDK's channels and
 * selector first, then over jsdp's selector with SDP channels (checked to be SDP).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SelectorReadyListTest extends ConformanceBase {
    private static final long WAIT_MS = 5_000;

    /** Connected pairs [client, accepted] of the kind's own channels, accepted ends non-blocking. */
    private List<SocketChannel[]> pairs(String kind, int n) throws IOException {
        SelectorProvider p = provider(kind);
        ServerSocketChannel server = track(p.openServerSocketChannel());
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), n);
        List<SocketChannel[]> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            SocketChannel client = track(p.openSocketChannel());
            client.connect(server.getLocalAddress());
            SocketChannel accepted = track(server.accept());
            if (kind.equals("jsdp")) {
                String how = accepted.getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(how != null && how.startsWith("sdp"), "not over SDP: " + how);
            }
            accepted.configureBlocking(false);
            out.add(new SocketChannel[] {client, accepted});
        }
        return out;
    }

    private static void send(SocketChannel ch, int b) throws IOException {
        assertEquals(1, ch.write(ByteBuffer.wrap(new byte[] {(byte) b})));
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aKeyStillReadableIsSelectedAgainWithoutANewEvent(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        SocketChannel[] p = pairs(kind, 1).get(0);
        SelectionKey k = p[1].register(sel, SelectionKey.OP_READ);
        assertEquals(0, sel.selectNow());
        send(p[0], 7);
        assertEquals(1, sel.select(WAIT_MS));
        assertEquals(0, sel.selectNow(), "still in the selected set with the same ready set: not counted");
        for (int round = 0; round < 3; round++) {
            sel.selectedKeys().clear();
            assertEquals(1, sel.selectNow(), "level-triggered: the unread byte selects the key again, round " + round);
            assertSame(k, sel.selectedKeys().iterator().next());
            assertEquals(SelectionKey.OP_READ, k.readyOps());
        }
        sel.selectedKeys().clear();
        long t0 = System.nanoTime();
        assertEquals(1, sel.select(WAIT_MS), "a blocking select does not wait while a key is ready");
        assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(WAIT_MS / 2));
        ByteBuffer b = ByteBuffer.allocate(4);
        assertEquals(1, p[1].read(b));
        assertEquals(7, b.get(0));
        sel.selectedKeys().clear();
        assertEquals(0, sel.selectNow(), "read: no longer ready");
        assertEquals(0, sel.selectNow());
        send(p[0], 8);
        assertEquals(1, sel.select(WAIT_MS), "a new byte selects it again");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aWritableKeyIsSelectedAtEverySelection(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        SocketChannel[] p = pairs(kind, 1).get(0);
        SelectionKey k = p[1].register(sel, SelectionKey.OP_WRITE);
        for (int round = 0; round < 5; round++) {
            assertEquals(1, sel.select(WAIT_MS), "round " + round);
            assertEquals(SelectionKey.OP_WRITE, k.readyOps());
            sel.selectedKeys().clear();
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void oneReadyAmongManyIdleKeysIsTheOnlyOneSelected(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        List<SocketChannel[]> ps = pairs(kind, 120);
        List<SelectionKey> keys = new ArrayList<>();
        for (SocketChannel[] p : ps) {
            keys.add(p[1].register(sel, SelectionKey.OP_READ, p));
        }
        assertEquals(0, sel.selectNow(), "all idle");
        for (int i : new int[] {0, 57, 119, 3, 57}) {
            SocketChannel[] p = ps.get(i);
            send(p[0], i);
            assertEquals(1, sel.select(WAIT_MS), "connection " + i);
            Set<SelectionKey> selected = sel.selectedKeys();
            assertEquals(1, selected.size());
            assertSame(keys.get(i), selected.iterator().next());
            assertEquals(0, sel.selectNow(), "unchanged while selected");
            assertEquals(1, p[1].read(ByteBuffer.allocate(4)));
            selected.clear();
            assertEquals(0, sel.selectNow(), "connection " + i + " read: nothing ready");
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void anInterestChangeFromAnotherThreadIsSeenByTheNextSelection(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        SocketChannel[] p = pairs(kind, 1).get(0);
        SelectionKey k = p[1].register(sel, 0);
        send(p[0], 1);
        assertEquals(0, sel.selectNow(), "readable and writable, but no interest");
        CompletableFuture.runAsync(() -> k.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE), TestThreads.POOL)
            .get(5, TimeUnit.SECONDS);
        assertEquals(1, sel.selectNow());
        assertEquals(SelectionKey.OP_READ | SelectionKey.OP_WRITE, k.readyOps());
        sel.selectedKeys().clear();
        CompletableFuture.runAsync(() -> k.interestOps(SelectionKey.OP_WRITE), TestThreads.POOL).get(5, TimeUnit.SECONDS);
        assertEquals(1, sel.selectNow());
        assertEquals(SelectionKey.OP_WRITE, k.readyOps());
        sel.selectedKeys().clear();
        CompletableFuture.runAsync(() -> k.interestOps(0), TestThreads.POOL).get(5, TimeUnit.SECONDS);
        assertEquals(0, sel.selectNow(), "no interest: a ready key is not selected");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aSelectBlockedAmongIdleKeysWakesForTheOneThatBecomesReadable(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        List<SocketChannel[]> ps = pairs(kind, 20);
        for (SocketChannel[] p : ps) {
            p[1].register(sel, SelectionKey.OP_READ);
        }
        for (int i : new int[] {4, 19}) {
            CompletableFuture<Integer> f = CompletableFuture.supplyAsync(() -> {
                try {
                    return sel.select(20_000);
                } catch (IOException e) {
                    return -1;
                }
            }, TestThreads.POOL);
            Thread.sleep(50); // usually blocked by now; either way the byte must end the select
            send(ps.get(i)[0], i);
            assertEquals(1, f.get(10, TimeUnit.SECONDS));
            SelectionKey k = sel.selectedKeys().iterator().next();
            assertSame(ps.get(i)[1], k.channel());
            assertEquals(1, ps.get(i)[1].read(ByteBuffer.allocate(4)));
            sel.selectedKeys().clear();
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aCancelledReadyKeyIsDeregisteredAndTheChannelRegistersAgain(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        SocketChannel[] p = pairs(kind, 1).get(0);
        SelectionKey k = p[1].register(sel, SelectionKey.OP_READ);
        send(p[0], 1);
        assertEquals(1, sel.select(WAIT_MS));
        k.cancel();
        assertEquals(0, sel.selectNow());
        assertTrue(sel.keys().isEmpty());
        assertTrue(sel.selectedKeys().isEmpty(), "the cancelled key left the selected set");
        SelectionKey again = p[1].register(sel, SelectionKey.OP_READ);
        assertEquals(1, sel.selectNow(), "the new key is ready at once");
        assertSame(again, sel.selectedKeys().iterator().next());
        sel.close();
        assertFalse(again.isValid());
    }

    /**
     * Races the readiness listener's signal against the selection's look at the ready list: each
     * round's byte is sent only once the selecting thread has consumed the previous one, so it usually
     * arrives while the select waits (or is about to), and a lost wake-up stalls a round.
     */
    @ParameterizedTest
    @MethodSource("kinds")
    void everyByteEndsABlockedSelectOverManyRounds(String kind) throws Exception {
        Selector sel = track(provider(kind).openSelector());
        List<SocketChannel[]> ps = pairs(kind, 8);
        for (SocketChannel[] p : ps) {
            p[1].register(sel, SelectionKey.OP_READ);
        }
        int rounds = 2_000;
        Semaphore consumed = new Semaphore(1);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    consumed.acquire();
                    send(ps.get(r % ps.size())[0], r);
                }
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, TestThreads.POOL);
        ByteBuffer b = ByteBuffer.allocate(4);
        for (int r = 0; r < rounds; r++) {
            long t0 = System.nanoTime();
            while (sel.selectedKeys().isEmpty()) {
                sel.select(WAIT_MS * 4); // a lost wake-up returns only at this timeout
            }
            assertTrue(System.nanoTime() - t0 < TimeUnit.MILLISECONDS.toNanos(WAIT_MS), "round " + r
                + ": the byte did not end the select");
            assertEquals(1, sel.selectedKeys().size(), "round " + r);
            SelectionKey k = sel.selectedKeys().iterator().next();
            assertSame(ps.get(r % ps.size())[1], k.channel(), "round " + r);
            b.clear();
            assertEquals(1, ((SocketChannel) k.channel()).read(b));
            assertEquals((byte) r, b.get(0));
            sel.selectedKeys().clear();
            consumed.release();
        }
        writer.get(5, TimeUnit.SECONDS);
    }
}
