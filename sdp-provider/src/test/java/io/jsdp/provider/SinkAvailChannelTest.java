package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * SinkAvail through the provider (issue 9): a blocking channel read into {@link Sdp#allocateDirect}
 * memory at the threshold advertises the buffer, and the peer's next blocking write of a direct buffer
 * RDMA-writes into it; the bytes arrive intact either way.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SinkAvailChannelTest {
    static final SelectorProvider JSDP = new SdpSelectorProvider();
    static final int SIZE = 1 << 20;

    private static byte at(long i) {
        return (byte) (i * 31 + (i >>> 9));
    }

    @Test
    void blockingReadIntoSdpDeviceMemoryReceivesThePeersWriteByRdmaWrite() throws Exception {
        try (ServerSocketChannel ss = JSDP.openServerSocketChannel()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel c = JSDP.openSocketChannel()) {
                c.connect(ss.getLocalAddress());
                try (SocketChannel s = ss.accept()) {
                    assertTrue(c.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), c.getOption(SdpSocketOptions.TRANSPORT));
                    SdpSocketChannel reader = (SdpSocketChannel) s;
                    SdpSocketChannel writer = (SdpSocketChannel) c;
                    ByteBuffer dst = Sdp.allocateDirect(SIZE);
                    ByteBuffer src = ByteBuffer.allocateDirect(SIZE); // we write it; the reader's is device memory
                    long offset = 0;
                    for (int round = 0; round < 20 && writer.sdpStats().zeroCopyTransfers() == 0; round++) {
                        for (int i = 0; i < SIZE; i++) {
                            src.put(i, at(offset + i));
                        }
                        src.clear();
                        dst.clear();
                        Future<Integer> r = TestThreads.POOL.submit(() -> {
                            int got = 0;
                            while (dst.hasRemaining()) {
                                int n = s.read(dst);
                                assertTrue(n > 0, "read " + n);
                                got += n;
                            }
                            return got;
                        });
                        Thread.sleep(20); // the reader blocks and advertises before the write
                        assertEquals(SIZE, c.write(src));
                        assertEquals(SIZE, r.get(30, TimeUnit.SECONDS).intValue());
                        for (int i = 0; i < SIZE; i++) {
                            if (dst.get(i) != at(offset + i)) {
                                throw new AssertionError("round " + round + " byte " + i);
                            }
                        }
                        offset += SIZE;
                    }
                    assertTrue(writer.sdpStats().zeroCopyTransfers() > 0, "an RDMA WRITE into the reader's buffer: "
                        + writer.sdpStats());
                    assertTrue(reader.sdpStats().zeroCopyBytes() > 0, reader.sdpStats().toString());
                    assertTrue(Sdp.free(dst));
                }
            }
        }
    }
}
