package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.Sdp;
import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Asynchronous zero copy on a non-blocking channel ({@link Sdp#writeZeroCopy}, issue 9): several
 * device buffers in flight, {@code done} once per buffer in order and only after the peer finished
 * with it (each {@code done} overwrites its buffer, and the reader checks every byte), plain writes and
 * {@code OP_WRITE} held back while buffers are handed over, refusal by a heap reader finished by copy,
 * close with buffers advertised, and buffers that cannot be handed over.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AsyncZeroCopyChannelTest {
    static final SelectorProvider JSDP = new SdpSelectorProvider();
    static final int THRESHOLD = io.jsdp.flow.engine.SdpOptions.ZCOPY_THRESHOLD_DEFAULT;
    static final byte GARBAGE = (byte) 0xEE;

    private static byte at(long i) {
        return (byte) (i * 31 + (i >>> 9) + (i >>> 17));
    }

    /** Fills {@code b} from 0 to {@code len} with the stream's bytes from {@code offset}. */
    private static void fill(ByteBuffer b, long offset, int len) {
        b.clear();
        for (int i = 0; i < len; i++) {
            b.put(i, at(offset + i));
        }
        b.limit(len);
    }

    private static void overwrite(ByteBuffer b) {
        b.clear();
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, GARBAGE);
        }
    }

    /** Reads {@code total} bytes with buffers of {@code dst}'s kind and checks each against the stream; returns the count. */
    private static long readAndCheck(SocketChannel in, long total, ByteBuffer dst) throws IOException {
        long got = 0;
        while (got < total) {
            dst.clear().limit((int) Math.min(dst.capacity(), total - got));
            int n = in.read(dst);
            if (n < 0) {
                break;
            }
            for (int i = 0; i < n; i++) {
                if (dst.get(i) != at(got + i)) {
                    throw new AssertionError("stream byte " + (got + i) + " is " + dst.get(i) + ", expected " + at(got + i));
                }
            }
            got += n;
        }
        return got;
    }

    private interface Body {
        void run(SocketChannel c, SocketChannel s) throws Exception;
    }

    /** A connected pair over SDP; {@code c} non-blocking. */
    private static void pair(Body body) throws Exception {
        try (ServerSocketChannel ss = JSDP.openServerSocketChannel()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel c = JSDP.openSocketChannel()) {
                c.connect(ss.getLocalAddress());
                try (SocketChannel s = ss.accept()) {
                    assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));
                    assertEquals(THRESHOLD, c.getOption(SdpSocketOptions.ZCOPY_THRESHOLD));
                    c.configureBlocking(false);
                    body.run(c, s);
                }
            }
        }
    }

    /**
     * A selector loop keeps up to six device buffers handed over (random sizes around the threshold,
     * some below it) and writes small heap chunks between them; every {@code done} overwrites its
     * buffer before it is refilled. The reader (direct buffers: zero copy) sees the stream intact.
     */
    @Test
    void manyHandOversInFlightInASelectorLoopArriveIntact() throws Exception {
        pair((c, s) -> {
            Random rnd = new Random(9);
            ArrayDeque<ByteBuffer> free = new ArrayDeque<>();
            List<ByteBuffer> all = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                ByteBuffer b = Sdp.allocateDirect(3 * THRESHOLD);
                free.add(b);
                all.add(b);
            }
            int chunks = 60;
            // the plan: sizes and kinds, so the reader knows the total
            int[] sizes = new int[chunks];
            boolean[] zero = new boolean[chunks];
            long total = 0;
            for (int i = 0; i < chunks; i++) {
                zero[i] = rnd.nextInt(4) != 0;
                sizes[i] = zero[i] ? THRESHOLD / 2 + rnd.nextInt(5 * THRESHOLD / 2) : 1 + rnd.nextInt(20_000);
                total += sizes[i];
            }
            long expected = total;
            Future<Long> reader = TestThreads.POOL.submit(() -> readAndCheck(s, expected, ByteBuffer.allocateDirect(1 << 20)));

            AtomicLong doneCount = new AtomicLong();
            List<String> errors = new ArrayList<>();
            ArrayDeque<ByteBuffer> order = new ArrayDeque<>();
            Thread loop = Thread.currentThread();
            io.jsdp.ZeroCopyCompletion done = (b, failure) -> {
                if (Thread.currentThread() != loop) {
                    errors.add("done ran on " + Thread.currentThread());
                }
                if (failure != null || b.hasRemaining() || order.pollFirst() != b) {
                    errors.add("done " + doneCount + ": failure " + failure + ", remaining " + b.remaining() + " or out of order");
                }
                overwrite(b); // the peer must have finished with it
                free.add(b);
                doneCount.incrementAndGet();
            };
            long handedOver = 0;
            try (Selector sel = JSDP.openSelector()) {
                SelectionKey key = c.register(sel, SelectionKey.OP_WRITE);
                long offset = 0;
                int next = 0;
                ByteBuffer plain = null;
                while (next < chunks || plain != null || doneCount.get() < handedOver) {
                    sel.select(200);
                    sel.selectedKeys().clear();
                    if (plain != null) {
                        c.write(plain); // 0 while buffers are handed over
                        if (!plain.hasRemaining()) {
                            plain = null;
                        }
                        continue;
                    }
                    // hand over a batch of 1..3 device chunks while buffers are free
                    List<ByteBuffer> batch = new ArrayList<>();
                    while (next < chunks && zero[next] && !free.isEmpty() && batch.size() < 1 + rnd.nextInt(3)) {
                        ByteBuffer b = free.pollFirst();
                        fill(b, offset, sizes[next]);
                        offset += sizes[next++];
                        batch.add(b);
                    }
                    if (!batch.isEmpty()) {
                        order.addAll(batch);
                        handedOver += batch.size();
                        Sdp.writeZeroCopy(c, batch.toArray(new ByteBuffer[0]), done);
                    } else if (next < chunks && !zero[next]) {
                        plain = ByteBuffer.allocate(sizes[next]);
                        fill(plain, offset, sizes[next]);
                        offset += sizes[next++];
                    }
                }
                assertTrue(key.isValid());
            }
            assertEquals(expected, reader.get(30, TimeUnit.SECONDS).longValue());
            assertTrue(errors.isEmpty(), errors.toString());
            assertEquals(handedOver, doneCount.get());
            assertTrue(((SdpSocketChannel) c).sdpStats().zeroCopyTransfers() > 0, "device buffers at the threshold went by zero copy");
            all.forEach(Sdp::free);
        });
    }

    /**
     * With the reader not reading yet, four handed-over buffers are advertised at once and stay the
     * channel's: no {@code done}, {@code OP_WRITE} not ready, plain writes take nothing, blocking mode
     * refused; once the reader reads, {@code done} runs in order and the bytes arrive intact although
     * each {@code done} overwrites its buffer.
     */
    @Test
    void handedOverBuffersStayTheChannelsUntilThePeerFinished() throws Exception {
        pair((c, s) -> {
            int size = 1 << 20;
            ByteBuffer[] bufs = new ByteBuffer[4];
            for (int i = 0; i < bufs.length; i++) {
                bufs[i] = Sdp.allocateDirect(size);
                fill(bufs[i], (long) i * size, size);
            }
            List<ByteBuffer> done = new ArrayList<>();
            List<IOException> failures = new ArrayList<>();
            Sdp.writeZeroCopy(c, bufs, (b, failure) -> {
                failures.add(failure);
                overwrite(b);
                done.add(b);
            });
            SdpSocketChannel sc = (SdpSocketChannel) c;
            String snapshot = sc.sdpConnection().snapshot();
            assertEquals(4, snapshot.split("ADVERTISED", -1).length - 1, "four advertisements in flight: " + snapshot);
            assertEquals(0, c.write(ByteBuffer.wrap(new byte[] {1})), "a plain write waits for the hand-overs");
            assertThrows(IllegalBlockingModeException.class, () -> c.configureBlocking(true));
            assertThrows(IllegalArgumentException.class, () -> Sdp.writeZeroCopy(c, new ByteBuffer[] {bufs[2]}, (b, f) -> { }),
                "a buffer still handed over");
            try (Selector sel = JSDP.openSelector()) {
                c.register(sel, SelectionKey.OP_WRITE);
                assertEquals(0, sel.selectNow(), "OP_WRITE is not ready while buffers are handed over");
                assertTrue(done.isEmpty(), "no done before the peer read");

                Future<Long> reader = TestThreads.POOL.submit(() -> readAndCheck(s, 4L * size, ByteBuffer.allocateDirect(size)));
                while (done.size() < 4) {
                    sel.select(200); // the done calls run in the selection
                    sel.selectedKeys().clear();
                }
                assertEquals(4L * size, reader.get(30, TimeUnit.SECONDS).longValue());
                assertEquals(List.of(bufs), done, "done once per buffer, in order");
                failures.forEach(f -> assertNull(f));
                assertEquals(1, sel.selectNow(), "OP_WRITE ready once every hand-over finished");
            }
            assertTrue(sc.sdpStats().zeroCopyTransfers() >= 4);
            for (ByteBuffer b : bufs) {
                Sdp.free(b);
            }
        });
    }

    /** A reader with heap buffers refuses zero copy (SendSm): the rest is copied before done, intact. */
    @Test
    void refusalByAHeapReaderFinishesByCopyBeforeDone() throws Exception {
        pair((c, s) -> {
            int size = 700_000;
            ByteBuffer[] bufs = new ByteBuffer[3];
            for (int i = 0; i < bufs.length; i++) {
                bufs[i] = Sdp.allocateDirect(size);
                fill(bufs[i], (long) i * size, size);
            }
            List<ByteBuffer> done = new ArrayList<>();
            Future<Long> reader = TestThreads.POOL.submit(() -> readAndCheck(s, 3L * size, ByteBuffer.allocate(64 * 1024)));
            Sdp.writeZeroCopy(c, bufs, (b, failure) -> {
                assertNull(failure);
                assertFalse(b.hasRemaining());
                overwrite(b);
                done.add(b);
            });
            ByteBuffer tail = ByteBuffer.allocate(1000);
            fill(tail, 3L * size, 1000);
            while (done.size() < 3 || tail.hasRemaining()) {
                c.write(tail); // makes progress; takes bytes only after the hand-overs finished
                if (tail.position() > 0) {
                    assertEquals(3, done.size(), "plain bytes went before the handed-over ones finished");
                }
                Thread.onSpinWait();
            }
            assertEquals(3L * size, reader.get(30, TimeUnit.SECONDS).longValue());
            assertEquals(List.of(bufs), done);
            assertEquals(0, ((SdpSocketChannel) c).sdpStats().zeroCopyTransfers(), "the heap reader refused every advertisement");
            ByteBuffer last = ByteBuffer.allocate(1000);
            while (last.hasRemaining()) {
                assertTrue(s.read(last) >= 0);
            }
            for (int i = 0; i < 1000; i++) {
                assertEquals(at(3L * size + i), last.get(i));
            }
            for (ByteBuffer b : bufs) {
                Sdp.free(b);
            }
        });
    }

    /**
     * A close with buffers advertised resets the connection before {@code done}, which gets an
     * AsynchronousCloseException for each, in order, on the closing thread; the reader sees a reset
     * (never the garbage {@code done} wrote).
     */
    @Test
    void closeMidTransferResetsBeforeDone() throws Exception {
        pair((c, s) -> {
            int size = 1 << 20;
            ByteBuffer[] bufs = new ByteBuffer[3];
            for (int i = 0; i < bufs.length; i++) {
                bufs[i] = Sdp.allocateDirect(size);
                fill(bufs[i], (long) i * size, size);
            }
            List<ByteBuffer> done = new ArrayList<>();
            List<IOException> failures = new ArrayList<>();
            Thread closer = Thread.currentThread();
            Sdp.writeZeroCopy(c, bufs, (b, failure) -> {
                assertSame(closer, Thread.currentThread());
                failures.add(failure);
                overwrite(b);
                done.add(b);
            });
            assertTrue(done.isEmpty());
            c.close();
            assertEquals(List.of(bufs), done, "done for every buffer, in order, by the close");
            failures.forEach(f -> assertInstanceOf(AsynchronousCloseException.class, f));
            IOException e = assertThrows(IOException.class, () -> readAndCheck(s, 3L * size, ByteBuffer.allocateDirect(size)),
                "the reader sees the reset");
            assertFalse(e instanceof java.nio.channels.ClosedChannelException, e.toString());
            for (ByteBuffer b : bufs) {
                Sdp.free(b);
            }
        });
    }

    /**
     * Across JVMs: a selector loop keeps three device buffers handed over to a peer process that reads
     * into a direct buffer (by RDMA READ from this process's device memory); every {@code done}
     * overwrites its buffer before it is refilled, and the peer's CRC of the stream matches.
     */
    @Test
    void handOversArriveIntactInAnotherJvm() throws Exception {
        try (PeerJvm peer = new PeerJvm("jsdp")) {
            int port = Integer.parseInt(peer.call("LISTEN"));
            peer.send("ACCEPT");
            try (SocketChannel c = JSDP.openSocketChannel()) {
                assertTrue(c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)));
                assertTrue(peer.answer("ACCEPT").startsWith("sdp"));
                c.configureBlocking(false);
                int size = 600_000;
                int count = 24;
                long total = (long) size * count;
                peer.send("READD 0 " + total);
                ArrayDeque<ByteBuffer> free = new ArrayDeque<>();
                for (int i = 0; i < 3; i++) {
                    free.add(Sdp.allocateDirect(size));
                }
                List<ByteBuffer> all = new ArrayList<>(free);
                java.util.zip.CRC32 crc = new java.util.zip.CRC32();
                byte[] chunk = new byte[size];
                List<String> errors = new ArrayList<>();
                int[] done = {0};
                io.jsdp.ZeroCopyCompletion completion = (b, failure) -> {
                    if (failure != null || b.hasRemaining()) {
                        errors.add("done " + done[0] + ": " + failure + ", remaining " + b.remaining());
                    }
                    overwrite(b);
                    free.add(b);
                    done[0]++;
                };
                try (Selector sel = JSDP.openSelector()) {
                    c.register(sel, SelectionKey.OP_WRITE);
                    int next = 0;
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (done[0] < count) {
                        // a loop, not a blocking call: the test's timeout cannot end it, this deadline does
                        assertTrue(System.nanoTime() - deadline < 0, () -> "stalled after " + done[0] + " of " + count
                            + " done: " + ((SdpSocketChannel) c).sdpConnection().snapshot());
                        if (next < count && !free.isEmpty()) {
                            ByteBuffer b = free.pollFirst();
                            fill(b, (long) next * size, size);
                            b.get(0, chunk);
                            crc.update(chunk);
                            next++;
                            Sdp.writeZeroCopy(c, new ByteBuffer[] {b}, completion);
                        } else {
                            sel.select(200);
                            sel.selectedKeys().clear();
                        }
                    }
                }
                assertEquals(Long.toString(crc.getValue()), peer.answer("READD"), "the peer read the stream intact");
                assertTrue(errors.isEmpty(), errors.toString());
                assertTrue(((SdpSocketChannel) c).sdpStats().zeroCopyTransfers() > 0, "the peer process read device memory in place");
                all.forEach(Sdp::free);
            }
        }
    }

    /** Buffers that cannot be handed over, and channels that cannot take them, are refused with a clear exception. */
    @Test
    void otherBuffersAndBlockingChannelsAreRefused() throws Exception {
        pair((c, s) -> {
            ByteBuffer device = Sdp.allocateDirect(THRESHOLD);
            io.jsdp.ZeroCopyCompletion ignore = (b, f) -> { };
            IllegalArgumentException heap = assertThrows(IllegalArgumentException.class,
                () -> Sdp.writeZeroCopy(c, new ByteBuffer[] {ByteBuffer.allocate(THRESHOLD)}, ignore));
            assertTrue(heap.getMessage().contains("Sdp.allocateDirect"), heap.getMessage());
            assertThrows(IllegalArgumentException.class,
                () -> Sdp.writeZeroCopy(c, new ByteBuffer[] {ByteBuffer.allocateDirect(THRESHOLD)}, ignore));
            assertThrows(IllegalArgumentException.class,
                () -> Sdp.writeZeroCopy(c, new ByteBuffer[] {device.duplicate()}, ignore));
            assertThrows(IllegalArgumentException.class, () -> Sdp.writeZeroCopy(c, new ByteBuffer[] {device, device}, ignore));
            assertThrows(IllegalBlockingModeException.class, () -> Sdp.writeZeroCopy(s, new ByteBuffer[] {device}, ignore));
            try (SocketChannel jdk = SocketChannel.open()) {
                assertThrows(UnsupportedOperationException.class, () -> Sdp.writeZeroCopy(jdk, new ByteBuffer[] {device}, ignore));
            }
            assertEquals(0, device.position(), "nothing was taken");
            Sdp.free(device);
        });
    }
}
