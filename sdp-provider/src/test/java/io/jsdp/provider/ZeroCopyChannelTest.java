package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.Sdp;
import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Zero copy through the provider (issue 9): a blocking channel write of {@link Sdp#allocateDirect}
 * memory at the threshold is read in place by the peer, the socket option sets the threshold, and
 * non-blocking writes and other buffers copy.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZeroCopyChannelTest {
    static final SelectorProvider JSDP = new SdpSelectorProvider();
    static final int SIZE = 1 << 20;

    private static byte at(long i) {
        return (byte) (i * 31 + (i >>> 9));
    }

    private static void exchange(SocketChannel out, SocketChannel in, ByteBuffer src) throws Exception {
        for (int i = 0; i < src.capacity(); i++) {
            src.put(i, at(i));
        }
        src.clear();
        Future<Integer> w = TestThreads.POOL.submit(() -> out.write(src));
        ByteBuffer dst = ByteBuffer.allocateDirect(src.capacity());
        while (dst.hasRemaining()) {
            assertTrue(in.read(dst) >= 0);
        }
        assertEquals(src.capacity(), w.get(30, TimeUnit.SECONDS), "a blocking write writes everything");
        assertFalse(src.hasRemaining());
        for (int i = 0; i < dst.capacity(); i++) {
            if (dst.get(i) != at(i)) {
                throw new AssertionError("byte " + i);
            }
        }
    }

    @Test
    void blockingWriteOfSdpDeviceMemoryIsReadInPlaceAndOtherBuffersCopy() throws Exception {
        try (ServerSocketChannel ss = JSDP.openServerSocketChannel()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel c = JSDP.openSocketChannel()) {
                c.connect(ss.getLocalAddress());
                try (SocketChannel s = ss.accept()) {
                    assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));
                    assertEquals(512 * 1024, c.getOption(SdpSocketOptions.ZCOPY_THRESHOLD));
                    SdpSocketChannel sc = (SdpSocketChannel) c;

                    ByteBuffer device = Sdp.allocateDirect(SIZE);
                    exchange(c, s, device);
                    assertEquals(1, sc.sdpStats().zeroCopyTransfers(), "device memory went by zero copy");

                    exchange(c, s, ByteBuffer.allocateDirect(SIZE));
                    exchange(c, s, ByteBuffer.allocate(SIZE));
                    assertEquals(1, sc.sdpStats().zeroCopyTransfers(), "plain direct and heap buffers copy");

                    c.setOption(SdpSocketOptions.ZCOPY_THRESHOLD, 0);
                    exchange(c, s, device);
                    assertEquals(1, sc.sdpStats().zeroCopyTransfers(), "threshold 0: off");
                    c.setOption(SdpSocketOptions.ZCOPY_THRESHOLD, 2 * SIZE);
                    exchange(c, s, device);
                    assertEquals(1, sc.sdpStats().zeroCopyTransfers(), "below the threshold: copied");
                    c.setOption(SdpSocketOptions.ZCOPY_THRESHOLD, SIZE);
                    exchange(c, s, device);
                    assertEquals(2, sc.sdpStats().zeroCopyTransfers(), "at the threshold: zero copy");
                    assertEquals(SIZE, c.getOption(SdpSocketOptions.ZCOPY_THRESHOLD));
                    assertThrows(IllegalArgumentException.class, () -> c.setOption(SdpSocketOptions.ZCOPY_THRESHOLD, 100));

                    assertTrue(Sdp.free(device));
                    assertFalse(Sdp.free(ByteBuffer.allocateDirect(16)));
                }
            }
        }
    }

    /**
     * FileChannel.transferTo/transferFrom with SDP channels: the JDK moves the bytes through its own
     * temporary direct buffers (8 KiB pieces: an SDP channel is not one of its channels), so they go by
     * buffer copy; they must arrive intact both ways.
     */
    @Test
    void fileChannelTransfersThroughSdpChannelsArriveIntact(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
        throws Exception {
        java.nio.file.Path in = dir.resolve("in");
        java.nio.file.Path out = dir.resolve("out");
        byte[] bytes = new byte[3 * SIZE + 12345];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = at(i);
        }
        java.nio.file.Files.write(in, bytes);
        try (ServerSocketChannel ss = JSDP.openServerSocketChannel()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel c = JSDP.openSocketChannel()) {
                c.connect(ss.getLocalAddress());
                try (SocketChannel s = ss.accept();
                     java.nio.channels.FileChannel src = java.nio.channels.FileChannel.open(in);
                     java.nio.channels.FileChannel dst = java.nio.channels.FileChannel.open(out,
                         java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE)) {
                    assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
                    Future<Long> w = TestThreads.POOL.submit(() -> {
                        long sent = 0;
                        while (sent < bytes.length) {
                            sent += src.transferTo(sent, bytes.length - sent, c);
                        }
                        c.shutdownOutput();
                        return sent;
                    });
                    long got = 0;
                    for (;;) {
                        long n = dst.transferFrom(s, got, bytes.length);
                        if (n == 0) {
                            break; // EOF (transferFrom returns 0 at end of stream)
                        }
                        got += n;
                    }
                    assertEquals(bytes.length, w.get(30, TimeUnit.SECONDS).longValue());
                    assertEquals(bytes.length, got);
                }
            }
        }
        org.junit.jupiter.api.Assertions.assertArrayEquals(bytes, java.nio.file.Files.readAllBytes(out));
    }

    /**
     * {@link Sdp#transferTo} / {@link Sdp#transferFrom}: the file's full pieces go by zero copy, the
     * short last piece and a transfer below the threshold by buffer copy; everything arrives intact.
     */
    @Test
    void sdpTransfersGoByZeroCopyAndArriveIntact(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path in = dir.resolve("in");
        java.nio.file.Path out = dir.resolve("out");
        byte[] bytes = new byte[3 * SIZE + 12345];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = at(i);
        }
        java.nio.file.Files.write(in, bytes);
        try (ServerSocketChannel ss = JSDP.openServerSocketChannel()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel c = JSDP.openSocketChannel()) {
                c.connect(ss.getLocalAddress());
                try (SocketChannel s = ss.accept();
                     java.nio.channels.FileChannel src = java.nio.channels.FileChannel.open(in);
                     java.nio.channels.FileChannel dst = java.nio.channels.FileChannel.open(out,
                         java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE)) {
                    assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"));
                    SdpSocketChannel sc = (SdpSocketChannel) c;
                    Future<Long> w = TestThreads.POOL.submit(() -> {
                        long sent = Sdp.transferTo(src, 0, 1000, c); // below the threshold: the JDK's path
                        while (sent < bytes.length) {
                            sent += Sdp.transferTo(src, sent, bytes.length - sent, c);
                        }
                        c.shutdownOutput();
                        return sent;
                    });
                    long got = 0;
                    for (;;) {
                        long n = Sdp.transferFrom(s, dst, got, bytes.length + 1 - got);
                        if (n == 0) {
                            break; // end of stream
                        }
                        got += n;
                    }
                    assertEquals(bytes.length, w.get(30, TimeUnit.SECONDS).longValue());
                    assertEquals(bytes.length, got);
                    assertEquals(0, src.position(), "the file's position is left alone");
                    assertEquals(3, sc.sdpStats().zeroCopyTransfers(), "three full pieces by zero copy");
                    assertEquals(0, Sdp.transferFrom(s, dst, bytes.length + 10, 5), "beyond the file's size: nothing");
                }
            }
        }
        org.junit.jupiter.api.Assertions.assertArrayEquals(bytes, java.nio.file.Files.readAllBytes(out));
        try (java.nio.channels.FileChannel src = java.nio.channels.FileChannel.open(in)) {
            assertThrows(IllegalArgumentException.class, () -> Sdp.transferTo(src, -1, 1,
                java.nio.channels.Channels.newChannel(new java.io.ByteArrayOutputStream())));
        }
    }
}
