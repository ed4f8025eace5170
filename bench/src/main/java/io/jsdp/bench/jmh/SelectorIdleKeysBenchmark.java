package io.jsdp.bench.jmh;

import io.jsdp.SdpSelectorProvider;
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
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code selectNow()} with one ready channel among {@code idle} idle ones registered for
 * {@code OP_READ} in the same selector, each provider's own stream channels (JDK TCP for {@code jdk},
 * SDP for {@code jsdp}, checked): what a selection costs an event loop with many quiet connections.
 * The JDK's epoll selector pays for the ready key only; so should jsdp's.
 */
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class SelectorIdleKeysBenchmark {
    /** {@code jdk}: the JDK's provider; {@code jsdp}: {@link SdpSelectorProvider}. */
    @Param({"jdk", "jsdp"})
    public String provider;

    /** Idle connections registered besides the ready one. */
    @Param({"1000"})
    public int idle;

    private Selector selector;
    private ServerSocketChannel listener;
    private final List<SocketChannel> channels = new ArrayList<>();

    /** Creates the benchmark (JMH). */
    public SelectorIdleKeysBenchmark() {
    }

    /**
     * Opens the selector, {@code idle} quiet connections and one whose accepted end has an unread byte.
     *
     * @throws IOException when the channels cannot be set up
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        SelectorProvider p = provider.equals("jsdp") ? new SdpSelectorProvider() : SelectorProvider.provider();
        selector = p.openSelector();
        listener = p.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), idle + 1);
        SocketChannel ready = null;
        for (int i = 0; i <= idle; i++) {
            SocketChannel client = p.openSocketChannel();
            client.connect(listener.getLocalAddress());
            SocketChannel accepted = listener.accept();
            channels.add(client);
            channels.add(accepted);
            if (provider.equals("jsdp")) {
                String how = accepted.getOption(SdpSocketOptions.TRANSPORT);
                if (how == null || !how.startsWith("sdp")) {
                    throw new IllegalStateException("not over SDP: " + how);
                }
            }
            accepted.configureBlocking(false);
            accepted.register(selector, SelectionKey.OP_READ);
            if (i == idle) {
                ByteBuffer one = ByteBuffer.allocate(1);
                one.put((byte) 1).flip();
                client.write(one);
                ready = accepted;
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (selector.selectNow() == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the byte never made the channel readable");
            }
        }
        if (selector.selectedKeys().size() != 1 || selector.selectedKeys().iterator().next().channel() != ready) {
            throw new IllegalStateException("expected only the one ready channel: " + selector.selectedKeys());
        }
        selector.selectedKeys().clear();
    }

    /**
     * Closes everything.
     *
     * @throws IOException when closing fails
     */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        selector.close();
        for (SocketChannel c : channels) {
            c.close();
        }
        listener.close();
    }

    /**
     * A non-blocking selection with one ready channel among the idle ones.
     *
     * @return the number of keys selected (1)
     * @throws IOException when selecting fails
     */
    @Benchmark
    public int selectNowOneReady() throws IOException {
        int n = selector.selectNow();
        selector.selectedKeys().clear();
        return n;
    }
}
