package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import io.jsdp.testbed.shm.ChildJvm;
import io.jsdp.testbed.shm.Rendezvous;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 30: another process holding SoftRdma's rendezvous lock never disables SDP silently. A listener
 * opened meanwhile waits the bounded {@code jsdp.soft.lockWaitMs}, then listens on TCP only, says why at
 * ERROR and counts it ({@code listen-failed}); clients still connect (over TCP); once the holder is gone,
 * listeners are on SDP again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RendezvousLockTest {
    private static final InetSocketAddress LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    /** A foreign process that takes the directory's lock and keeps it. */
    public static final class Holder {
        private Holder() {
        }

        /**
         * Holds {@code <args[0]>/lock} until killed.
         *
         * @param args the rendezvous directory
         * @throws Exception never in practice
         */
        public static void main(String[] args) throws Exception {
            try (FileChannel ch = FileChannel.open(Path.of(args[0]).resolve("lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
                 FileLock held = ch.lock()) {
                System.out.println("READY " + held.isValid());
                System.out.flush();
                Thread.sleep(Long.MAX_VALUE);
            }
        }
    }

    @Test
    void aListenerFallsBackToTcpWithinASecondWhenAnotherProcessHoldsTheLockSaysSoAndCountsIt() throws Exception {
        SelectorProvider jsdp = new SdpSelectorProvider();
        try (ServerSocketChannel before = jsdp.openServerSocketChannel().bind(LOOPBACK)) {
            assertTrue(before.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), "SDP before the lock is taken");
        }
        Map<String, Long> counted = SocketRegistry.fallbacks();
        try (ChildJvm holder = ChildJvm.start(Holder.class, Rendezvous.defaultDirectory().toString())) {
            assertTrue(holder.awaitLine("READY", 15, TimeUnit.SECONDS).endsWith("true"), "the child holds the lock");
            long t0 = System.nanoTime();
            try (ServerSocketChannel server = jsdp.openServerSocketChannel().bind(LOOPBACK)) {
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertTrue(ms < 1_000, "the listen fell back within a second: " + ms + " ms");
                String t = server.getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(t.startsWith("tcp (SDP listen failed: ") && t.contains("held by process " + holder.pid()), t);
                assertEquals(counted.getOrDefault("listen-failed", 0L) + 1, SocketRegistry.fallbacks().get("listen-failed"),
                    SocketRegistry.fallbacks().toString());
                try (SocketChannel client = jsdp.openSocketChannel()) {
                    client.connect(server.getLocalAddress());
                    try (SocketChannel accepted = server.accept()) {
                        assertTrue(client.getOption(SdpSocketOptions.TRANSPORT).startsWith("tcp (no SDP listener"),
                            client.getOption(SdpSocketOptions.TRANSPORT));
                        ByteBuffer out = ByteBuffer.wrap(new byte[] {1, 2, 3});
                        while (out.hasRemaining()) {
                            client.write(out);
                        }
                        ByteBuffer in = ByteBuffer.allocate(3);
                        while (in.hasRemaining()) {
                            assertTrue(accepted.read(in) >= 0);
                        }
                        assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), in.flip());
                    }
                }
            }
        }
        try (ServerSocketChannel after = jsdp.openServerSocketChannel().bind(LOOPBACK)) {
            assertTrue(after.getOption(SdpSocketOptions.TRANSPORT).startsWith("sdp"), "SDP again once the holder is gone: "
                + after.getOption(SdpSocketOptions.TRANSPORT));
        }
    }
}
