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
 * The provider's {@code HybridSelector} against the JDK's selector, same operations (issue 7). Each
 * provider's own stream channels: JDK TCP for {@code jdk}, SDP for {@code jsdp} (checked). Run with
 * {@code -prof gc} for the allocation per selection.
 *
 * <ul>
 *   <li>{@code wakeupSelect}: {@code wakeup()} then {@code select()} on a selector without keys, which
 *       returns at once because of the wake-up — its cost as a loop sees it (the JDK writes to an eventfd/pipe and reads it back).</li>
 *   <li>{@code selectNowReady}: {@code selectNow()} over one connected channel registered for
 *       {@code OP_READ} whose unread byte keeps it ready, then {@code selectedKeys().clear()} — an event
 *       loop's per-iteration cost with one ready channel.</li>
 * </ul>
 */
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Benchmark)
public class SelectorBenchmark {
    /** {@code jdk}: the JDK's provider; {@code jsdp}: {@link SdpSelectorProvider}. */
    @Param({"jdk", "jsdp"})
    public String provider;

    private Selector selector;
    /** No keys: its select() returns only because of the wake-up. */
    private Selector empty;
    private ServerSocketChannel listener;
    private SocketChannel client;
    private SocketChannel accepted;

    /** Creates the benchmark (JMH). */
    public SelectorBenchmark() {
    }

    /**
     * Opens the selector and one connection whose accepted end has one unread byte.
     *
     * @throws IOException when the channels cannot be set up
     */
    @Setup(Level.Trial)
    public void setUp() throws IOException {
        SelectorProvider p = provider.equals("jsdp") ? new SdpSelectorProvider() : SelectorProvider.provider();
        selector = p.openSelector();
        empty = p.openSelector();
        listener = p.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        client = p.openSocketChannel();
        client.connect(listener.getLocalAddress());
        accepted = listener.accept();
        if (provider.equals("jsdp")) {
            String how = accepted.getOption(SdpSocketOptions.TRANSPORT);
            if (how == null || !how.startsWith("sdp")) {
                throw new IllegalStateException("not over SDP: " + how);
            }
        }
        ByteBuffer one = ByteBuffer.allocate(1);
        one.put((byte) 1).flip();
        client.write(one);
        accepted.configureBlocking(false);
        accepted.register(selector, SelectionKey.OP_READ);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (selector.selectNow() == 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the byte never made the channel readable");
            }
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
        empty.close();
        accepted.close();
        client.close();
        listener.close();
    }

    /**
     * A wake-up and the selection it ends.
     *
     * @return the number of keys selected
     * @throws IOException when selecting fails
     */
    @Benchmark
    public int wakeupSelect() throws IOException {
        empty.wakeup();
        return empty.select();
    }

    /**
     * A non-blocking selection with one ready channel.
     *
     * @return the number of keys selected (1)
     * @throws IOException when selecting fails
     */
    @Benchmark
    public int selectNowReady() throws IOException {
        int n = selector.selectNow();
        selector.selectedKeys().clear();
        return n;
    }
}
