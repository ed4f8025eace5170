package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.ras.Ffdc;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 5, acceptance 2: every way a connection ends, in one JVM — half-close, graceful close from
 * either side and from both at once, abortive close (linger 0, unread data, abort, data after close),
 * the close timeout, keepalive on a dead link, refused and unanswered connects, and asynchronous
 * close waking a parked reader. Each checks what the peer sees, the states, and that both ends free
 * their device resources (the fixture fails on leaks). Every case runs for each flow-control scheme
 * (issue 8, acceptance 1), both ends asking for it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TeardownTest {
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
    }

    private static String readAll(SdpConnection c) throws Exception {
        ByteBuffer dst = ByteBuffer.allocate(1 << 16);
        while (Blocking.read(c, dst) != SdpConnection.EOF) {
            if (!dst.hasRemaining()) {
                throw new AssertionError("too much data");
            }
        }
        dst.flip();
        return StandardCharsets.US_ASCII.decode(dst).toString();
    }

    private static void assertReleased(SdpConnection c) throws InterruptedException {
        assertTrue(c.awaitReleased(WAIT_NS), () -> "not released: " + c.snapshot());
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void halfCloseDeliversDataThenEofAndThePeerKeepsWriting(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            Blocking.writeFully(p.a, text("request"));
            p.a.shutdownOutput();
            assertEquals(SdpConnection.OUTPUT_SHUT, p.a.write(text("more")));
            assertEquals("request", readAll(p.b));
            Blocking.writeFully(p.b, text("response after EOF"));
            p.b.shutdownOutput();
            assertEquals("response after EOF", readAll(p.a));
            assertEquals(SdpConnection.EOF, p.a.read(ByteBuffer.allocate(8)));
            assertReleased(p.a);
            assertReleased(p.b);
            assertEquals(SdpConnection.State.FINISHED, p.a.state());
            assertEquals(SdpConnection.State.FINISHED, p.b.state());
            assertNull(p.a.failure());
            assertNull(p.b.failure());
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void gracefulCloseDeliversEverythingAndBothEndsFinish(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            Blocking.writeFully(p.a, ByteBuffer.allocate(200_000));
            p.a.close();
            assertEquals(SdpConnection.CLOSED, p.a.write(text("x")));
            assertEquals(SdpConnection.CLOSED, p.a.read(ByteBuffer.allocate(1)));
            ByteBuffer all = ByteBuffer.allocate(200_000);
            Blocking.readFully(p.b, all);
            assertEquals(SdpConnection.EOF, Blocking.read(p.b, ByteBuffer.allocate(1)));
            p.b.close();
            assertReleased(p.a);
            assertReleased(p.b);
            assertEquals(SdpConnection.State.FINISHED, p.a.state());
            assertEquals(SdpConnection.State.FINISHED, p.b.state());
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void bothSidesClosingAtOnceFinishGracefully(FlowControlScheme scheme) throws Exception {
        for (int round = 0; round < 20; round++) {
            try (SdpPair p = SdpPair.open(scheme)) {
                CountDownLatch go = new CountDownLatch(1);
                CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    p.b.close();
                }, TestThreads.POOL);
                go.countDown();
                p.a.close();
                other.get(10, TimeUnit.SECONDS);
                assertReleased(p.a);
                assertReleased(p.b);
                assertEquals(SdpConnection.State.FINISHED, p.a.state(), p.a.snapshot());
                assertEquals(SdpConnection.State.FINISHED, p.b.state(), p.b.snapshot());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void closeWithUnreadDataResetsThePeer(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            Blocking.writeFully(p.a, text("never read"));
            assertTrue(p.b.await(SdpConnection.OP_READ, WAIT_NS) != 0);
            p.b.close();
            assertEquals(Failure.ABORTED, p.b.failure());
            assertEquals(SdpConnection.OP_READ, p.a.await(SdpConnection.OP_READ, WAIT_NS));
            assertEquals(SdpConnection.FAILED, p.a.read(ByteBuffer.allocate(8)));
            assertEquals(Failure.RESET_BY_PEER, p.a.failure());
            assertEquals(SdpConnection.FAILED, p.a.write(text("x")));
            assertReleased(p.a);
            assertReleased(p.b);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void lingerZeroCloseResetsThePeer(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(new SdpOptions().flowControl(scheme).lingerSeconds(0), new SdpOptions().flowControl(scheme))) {
            Blocking.writeFully(p.a, text("sent before the reset"));
            p.a.close();
            assertEquals(Failure.ABORTED, p.a.failure());
            // as Linux TCP after a RST: the data that arrived before the reset is read first, then the reset
            ByteBuffer got = ByteBuffer.allocate(64);
            int r = 0;
            for (int i = 0; i < 200 && r >= 0; i++) {
                p.b.await(SdpConnection.OP_READ, WAIT_NS);
                r = p.b.read(got);
                if (r == 0) {
                    Thread.sleep(5);
                }
            }
            assertEquals(SdpConnection.FAILED, r, p.b::snapshot);
            assertEquals("sent before the reset", new String(got.array(), 0, got.position(), StandardCharsets.US_ASCII));
            assertEquals(Failure.RESET_BY_PEER, p.b.failure());
            assertEquals(SdpConnection.FAILED, p.b.read(ByteBuffer.allocate(8)), "the reset stays");
            assertReleased(p.a);
            assertReleased(p.b);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void abortResetsThePeerAndFreesAtOnce(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            p.b.abort();
            assertTrue(p.b.isReleased());
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS));
            assertEquals(Failure.RESET_BY_PEER, p.a.failure());
            assertReleased(p.a);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void dataArrivingAfterCloseResetsTheWriter(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            p.b.close();
            assertEquals("", readAll(p.a)); // the DisConn of B's close
            Blocking.writeFully(p.a, text("too late"));
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS));
            assertEquals(Failure.RESET_BY_PEER, p.a.failure());
            assertEquals(Failure.ABORTED, p.b.failure());
            assertReleased(p.a);
            assertReleased(p.b);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void closeTimesOutWhenThePeerNeverClosesAndRecordsFfdc(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(new SdpOptions().flowControl(scheme).closeTimeoutMs(300), new SdpOptions().flowControl(scheme))) {
            long t0 = System.nanoTime();
            p.a.close();
            assertEquals("", readAll(p.b)); // B sees EOF but keeps its end open
            assertReleased(p.a);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(Failure.CLOSE_TIMEOUT, p.a.failure(), p.a.snapshot());
            assertTrue(ms >= 250, "timed out after " + ms + " ms");
            assertFalse(Ffdc.find("connection.CLOSE_TIMEOUT", "connection " + p.a.id() + " ").isEmpty());
            assertEquals(SdpConnection.OP_ENDED, p.b.await(SdpConnection.OP_ENDED, WAIT_NS));
            assertEquals(Failure.RESET_BY_PEER, p.b.failure());
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void asynchronousCloseWakesAParkedReader(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(new SdpOptions().flowControl(scheme).spinNs(0), new SdpOptions().flowControl(scheme))) {
            CompletableFuture<Integer> reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return p.a.await(SdpConnection.OP_READ, WAIT_NS);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
            Thread.sleep(100);
            assertFalse(reader.isDone());
            p.a.close();
            assertEquals(SdpConnection.OP_READ, reader.get(5, TimeUnit.SECONDS));
            assertEquals(SdpConnection.CLOSED, p.a.read(ByteBuffer.allocate(1)));
            p.b.close();
            assertReleased(p.a);
            assertReleased(p.b);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void shutdownInputReadsEofAndDropsWhatStillArrives(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            p.b.shutdownInput();
            assertEquals(SdpConnection.EOF, p.b.read(ByteBuffer.allocate(8)));
            for (int i = 0; i < 200; i++) {
                Blocking.writeFully(p.a, ByteBuffer.allocate(64 * 1024)); // never blocks on B's unread data
            }
            assertEquals(0, p.b.available());
            assertEquals(SdpConnection.EOF, p.b.read(ByteBuffer.allocate(8)));
            p.a.close();
            p.b.close();
            assertReleased(p.a);
            assertReleased(p.b);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void connectWithoutListenerIsRefused(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions().flowControl(scheme))) {
            InetSocketAddress nobody = new InetSocketAddress(InetAddress.getLoopbackAddress(), p.listener.localAddress().getPort() + 17);
            SdpConnection c = p.stackA.connect(nobody, new SdpOptions().flowControl(scheme));
            assertFalse(c.awaitConnected(WAIT_NS));
            assertEquals(Failure.CONNECTION_REFUSED, c.failure(), c.snapshot());
            assertReleased(c);
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void unansweredConnectTimesOut(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions().flowControl(scheme))) {
            p.deviceA.faults().dropConnectRequests(true);
            SdpConnection c = p.stackA.connect(p.listener.localAddress(), new SdpOptions().flowControl(scheme).connectTimeoutMs(500));
            long t0 = System.nanoTime();
            assertFalse(c.awaitConnected(WAIT_NS));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertEquals(Failure.CONNECT_TIMEOUT, c.failure(), c.snapshot());
            assertTrue(ms < 5_000, "took " + ms + " ms");
            assertReleased(c);
            p.deviceA.faults().clear();
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void keepAliveFindsADeadLinkWithoutTraffic(FlowControlScheme scheme) throws Exception {
        SdpOptions probing = new SdpOptions().flowControl(scheme).keepAlive(true).keepAliveTimeMs(100);
        try (SdpPair p = SdpPair.open(probing, new SdpOptions().flowControl(scheme))) {
            p.deviceB.faults().linkDown(true);
            assertEquals(SdpConnection.OP_ENDED, p.a.await(SdpConnection.OP_ENDED, WAIT_NS), p.a.snapshot());
            assertEquals(Failure.KEEPALIVE_TIMEOUT, p.a.failure(), p.a.failureDetail());
            assertFalse(Ffdc.find("connection.KEEPALIVE_TIMEOUT", "connection " + p.a.id() + " ").isEmpty());
            p.deviceB.faults().clear();
            p.b.abort();
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void keepAliveLeavesAnIdleHealthyConnectionAlone(FlowControlScheme scheme) throws Exception {
        SdpOptions probing = new SdpOptions().flowControl(scheme).keepAlive(true).keepAliveTimeMs(50);
        try (SdpPair p = SdpPair.open(probing, new SdpOptions().flowControl(scheme))) {
            Thread.sleep(500);
            assertEquals(SdpConnection.State.ESTABLISHED, p.a.state());
            Blocking.writeFully(p.a, text("still here"));
            p.a.shutdownOutput();
            assertEquals("still here", readAll(p.b));
        }
    }

    @ParameterizedTest
    @EnumSource(FlowControlScheme.class)
    void closingTheStackResetsItsConnectionsPeers(FlowControlScheme scheme) throws Exception {
        try (SdpPair p = SdpPair.open(scheme)) {
            p.stackA.close();
            assertEquals(Failure.STACK_CLOSED, p.a.failure());
            assertEquals(SdpConnection.OP_ENDED, p.b.await(SdpConnection.OP_ENDED, WAIT_NS));
            assertEquals(Failure.RESET_BY_PEER, p.b.failure());
            assertNotNull(p.b.failureDetail());
        }
    }
}
