package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The selector contract frameworks depend on ({@code java-nio-provider.md} §2.1), run first on the
 * JDK's own selector (the baseline) and then on jsdp's hybrid selector with the JDK's channels of
 * every kind registered in it: both must give the same results.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SelectorSemanticsTest {
    private final List<AutoCloseable> open = new ArrayList<>();

    static Stream<String> selectors() {
        return Stream.of("jdk", "jsdp");
    }

    private Selector selector(String kind) throws IOException {
        Selector s = kind.equals("jdk") ? SelectorProvider.provider().openSelector() : new SdpSelectorProvider().openSelector();
        open.add(s);
        if (kind.equals("jsdp")) {
            assertTrue(s.provider() instanceof SdpSelectorProvider);
        }
        return s;
    }

    private <T extends AutoCloseable> T track(T c) {
        open.add(c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        Thread.interrupted();
    }

    /** A connected pair: [client, accepted], both non-blocking. */
    private SocketChannel[] pair() throws IOException {
        ServerSocketChannel server = track(ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        SocketChannel client = track(SocketChannel.open(server.getLocalAddress()));
        SocketChannel accepted = track(server.accept());
        client.configureBlocking(false);
        accepted.configureBlocking(false);
        return new SocketChannel[] {client, accepted};
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void acceptThenReadWithExactCounts(String kind) throws Exception {
        Selector sel = selector(kind);
        ServerSocketChannel server = track(ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        server.configureBlocking(false);
        SelectionKey acceptKey = server.register(sel, SelectionKey.OP_ACCEPT, "acceptor");
        assertSame(acceptKey, server.keyFor(sel));
        assertEquals(0, sel.selectNow());
        SocketChannel client = track(SocketChannel.open(server.getLocalAddress()));
        assertEquals(1, sel.select(5_000));
        assertTrue(sel.selectedKeys().contains(acceptKey));
        assertTrue(acceptKey.isAcceptable());
        assertEquals("acceptor", acceptKey.attachment());
        SocketChannel accepted = track(server.accept());
        sel.selectedKeys().clear();
        accepted.configureBlocking(false);
        SelectionKey readKey = accepted.register(sel, SelectionKey.OP_READ);
        client.write(ByteBuffer.wrap(new byte[] {42}));
        assertEquals(1, sel.select(5_000));
        assertEquals(SelectionKey.OP_READ, readKey.readyOps());
        ByteBuffer b = ByteBuffer.allocate(4);
        assertEquals(1, accepted.read(b));
        assertEquals(42, b.get(0));
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void aKeyAlreadySelectedHasItsReadySetOredAndCountsOnlyWhenItChanges(String kind) throws Exception {
        Selector sel = selector(kind);
        SocketChannel[] p = pair();
        SelectionKey k = p[1].register(sel, SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        assertEquals(1, sel.select(5_000));
        assertEquals(SelectionKey.OP_WRITE, k.readyOps());
        assertEquals(0, sel.selectNow(), "still selected, ready set unchanged");
        p[0].write(ByteBuffer.wrap(new byte[] {1}));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        int n = 0;
        while (n == 0 && System.nanoTime() < deadline) {
            n = sel.select(100);
        }
        assertEquals(1, n);
        assertEquals(SelectionKey.OP_READ | SelectionKey.OP_WRITE, k.readyOps(), "OR-ed");
        sel.selectedKeys().clear();
        k.interestOps(SelectionKey.OP_WRITE);
        assertEquals(1, sel.selectNow());
        assertEquals(SelectionKey.OP_WRITE, k.readyOps(), "a new selection replaces the ready set");
        // still selected: READ that is no longer ready stays in the ready set, WRITE is added
        sel.selectedKeys().clear();
        k.interestOps(SelectionKey.OP_READ);
        p[0].write(ByteBuffer.wrap(new byte[] {2}));
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (sel.selectedKeys().isEmpty() && System.nanoTime() < deadline) {
            sel.select(100);
        }
        assertEquals(SelectionKey.OP_READ, k.readyOps());
        p[1].read(ByteBuffer.allocate(16));
        k.interestOps(SelectionKey.OP_WRITE);
        assertEquals(1, sel.selectNow(), "a new bit counts");
        assertEquals(SelectionKey.OP_READ | SelectionKey.OP_WRITE, k.readyOps(), "OR-ed, never replaced, while selected");
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void aCancelledKeyIsFlushedAndTheChannelCanRegisterAgain(String kind) throws Exception {
        Selector sel = selector(kind);
        SocketChannel[] p = pair();
        SelectionKey k = p[1].register(sel, SelectionKey.OP_WRITE);
        k.cancel();
        assertFalse(k.isValid());
        assertThrows(CancelledKeyException.class, () -> k.interestOps(SelectionKey.OP_READ));
        assertThrows(CancelledKeyException.class, k::readyOps);
        assertEquals(0, sel.selectNow());
        assertFalse(sel.keys().contains(k));
        SelectionKey again = p[1].register(sel, SelectionKey.OP_WRITE);
        assertNotSame(k, again);
        assertEquals(1, sel.selectNow());
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void closingARegisteredChannelCancelsItsKey(String kind) throws Exception {
        Selector sel = selector(kind);
        SocketChannel[] p = pair();
        SelectionKey k = p[1].register(sel, SelectionKey.OP_READ);
        p[1].close();
        assertFalse(k.isValid());
        sel.selectNow();
        assertTrue(sel.keys().isEmpty());
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void interestOpsOutsideValidOpsAreRefused(String kind) throws Exception {
        Selector sel = selector(kind);
        SocketChannel[] p = pair();
        SelectionKey k = p[1].register(sel, 0);
        assertThrows(IllegalArgumentException.class, () -> k.interestOps(SelectionKey.OP_ACCEPT));
        assertEquals(0, k.interestOps());
        k.interestOpsOr(SelectionKey.OP_READ);
        assertEquals(SelectionKey.OP_READ, k.interestOps());
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void aWakeupBeforeSelectEndsTheNextSelectOnlyAndCoalesces(String kind) throws Exception {
        Selector sel = selector(kind);
        sel.wakeup();
        sel.wakeup();
        long t0 = System.nanoTime();
        assertEquals(0, sel.select(10_000));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
        t0 = System.nanoTime();
        assertEquals(0, sel.select(200));
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(150), "two wakeups count once");
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void wakeupRegisterInterruptAndCloseEachEndABlockedSelect(String kind) throws Exception {
        Selector sel = selector(kind);
        // wakeup from another thread
        CompletableFuture<Integer> f = CompletableFuture.supplyAsync(() -> select(sel), TestThreads.POOL);
        Thread.sleep(100);
        sel.wakeup();
        assertEquals(0, f.get(5, TimeUnit.SECONDS));
        // register from another thread during select does not block
        CompletableFuture<Integer> g = CompletableFuture.supplyAsync(() -> select(sel), TestThreads.POOL);
        Thread.sleep(100);
        SocketChannel[] p = pair();
        long t0 = System.nanoTime();
        p[1].register(sel, SelectionKey.OP_READ);
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(2), "register waited for the select");
        sel.wakeup();
        g.get(5, TimeUnit.SECONDS);
        // interrupt: select returns, the status stays set
        AtomicInteger interruptedAfter = new AtomicInteger(-1);
        Thread t = new Thread(() -> {
            select(sel);
            interruptedAfter.set(Thread.currentThread().isInterrupted() ? 1 : 0);
        });
        t.start();
        Thread.sleep(100);
        t.interrupt();
        t.join(5_000);
        assertEquals(1, interruptedAfter.get());
        // close from another thread
        CompletableFuture<Integer> h = CompletableFuture.supplyAsync(() -> select(sel), TestThreads.POOL);
        Thread.sleep(100);
        sel.close();
        h.get(5, TimeUnit.SECONDS);
        assertThrows(ClosedSelectorException.class, sel::keys);
        assertThrows(ClosedSelectorException.class, sel::selectNow);
    }

    private static int select(Selector sel) {
        try {
            return sel.select(20_000);
        } catch (IOException | ClosedSelectorException e) {
            return -1;
        }
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void theKeySetsAreViewsThatCannotGrow(String kind) throws Exception {
        Selector sel = selector(kind);
        SocketChannel[] p = pair();
        SelectionKey k = p[1].register(sel, SelectionKey.OP_WRITE);
        assertThrows(UnsupportedOperationException.class, () -> sel.keys().remove(k));
        assertEquals(1, sel.selectNow());
        assertSame(sel.selectedKeys(), sel.selectedKeys());
        assertThrows(UnsupportedOperationException.class, () -> sel.selectedKeys().add(k));
        var it = sel.selectedKeys().iterator();
        assertSame(k, it.next());
        it.remove();
        assertTrue(sel.selectedKeys().isEmpty());
        assertTrue(sel.keys().contains(k), "keys() is live and keeps the key");
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void selectWithAnActionRunsItOncePerReadyKey(String kind) throws Exception {
        Selector sel = selector(kind);
        SocketChannel[] p = pair();
        SocketChannel[] q = pair();
        p[1].register(sel, SelectionKey.OP_WRITE);
        q[1].register(sel, SelectionKey.OP_WRITE);
        List<SelectionKey> seen = new ArrayList<>();
        assertEquals(2, sel.selectNow(seen::add));
        assertEquals(2, seen.size());
        assertTrue(sel.selectedKeys().isEmpty());
    }

    @ParameterizedTest
    @MethodSource("selectors")
    void datagramPipeAndStreamChannelsShareOneSelector(String kind) throws Exception {
        Selector sel = selector(kind);
        DatagramChannel rx = track(DatagramChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)));
        DatagramChannel tx = track(DatagramChannel.open());
        rx.configureBlocking(false);
        Pipe pipe = Pipe.open();
        track(pipe.source());
        track(pipe.sink());
        pipe.source().configureBlocking(false);
        SocketChannel[] p = pair();
        SelectionKey dk = rx.register(sel, SelectionKey.OP_READ, "udp");
        SelectionKey pk = pipe.source().register(sel, SelectionKey.OP_READ, "pipe");
        SelectionKey sk = p[1].register(sel, SelectionKey.OP_READ, "tcp");
        tx.send(ByteBuffer.wrap(new byte[] {1}), rx.getLocalAddress());
        pipe.sink().write(ByteBuffer.wrap(new byte[] {2}));
        p[0].write(ByteBuffer.wrap(new byte[] {3}));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (sel.selectedKeys().size() < 3 && System.nanoTime() < deadline) {
            sel.select(100);
        }
        assertEquals(3, sel.selectedKeys().size());
        for (SelectionKey k : List.of(dk, pk, sk)) {
            assertTrue(k.isReadable(), () -> k.attachment() + " not readable");
        }
        assertNotNull(rx.receive(ByteBuffer.allocate(4)));
    }
}
