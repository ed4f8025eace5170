package io.jsdp.bench.cli;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.DuplexChannel;
import java.io.IOException;
import java.net.SocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The client of {@code --io netty}: a Netty 4.2 client on its NIO transport, one event-loop thread
 * driving {@code --connections} connections against a {@link NettyServer}, written as a Netty
 * application is: a handler per connection, a new buffer per message, writes flushed per request
 * (rr) or per read burst (rate), writing while the channel is writable (stream). Figures go through
 * the {@link Client} that made it, with the same names and checks as the other I/O modes; a point's
 * start and end are taken on the event loop, so its counts and its interval match.
 */
final class NettyClient implements EventLoopScenarios {
    /** Longest wait for a point's connections to finish once it has ended. */
    private static final long FINISH_TIMEOUT_MS = 60_000;

    private final Client client;
    private final Transport transport;
    private final SocketAddress remote;
    private final Options options;

    NettyClient(Client client, Transport transport, String address, Options options) {
        this.client = client;
        this.transport = transport;
        this.remote = transport.remote(address);
        this.options = options;
    }

    /** What a point counts; touched on the event loop only, read by the caller once the point has finished. */
    private final class Point {
        final Scenario scenario;
        final long size;
        boolean measuring;
        boolean stopping;
        long t0;
        CpuMeter cpu;
        long count;
        int samples;

        Point(Scenario scenario, long size) {
            this.scenario = scenario;
            this.size = size;
        }

        void start() {
            measuring = true;
            t0 = System.nanoTime();
            cpu = CpuMeter.start(options.loadPid);
        }

        /** One completed operation that took {@code ns}; recorded while measuring. */
        void completed(long ns) {
            if (measuring && !stopping) {
                count++;
                long[] s = client.samples();
                if (samples < s.length) {
                    s[samples++] = ns;
                }
            }
        }

        /** One completed operation, counted while measuring (no latency sample). */
        void counted() {
            if (measuring && !stopping) {
                count++;
            }
        }

        /** Ends the measured interval: the rate and the CPU per operation of what completed in it. */
        void stop(String rateMetric) {
            stopping = true;
            client.emit(scenario, size, rateMetric, count / ((System.nanoTime() - t0) / 1e9), "1/s");
            client.emit(scenario, size, "cpu_per_op_us", cpu.perOpUs(count), "us");
        }
    }

    /** One point's event-loop group and connections. */
    private final class Loop implements AutoCloseable {
        final EventLoopGroup group = NettyTransport.group(transport, "bench-netty-client");
        final EventLoop loop = group.next();
        final ChannelGroup channels = new DefaultChannelGroup(loop);
        /**
         * The connections that became active: a point starts when all have (an SDP connect takes longer
         * than a TCP one, and a connection that came up after the point ended would never end).
         */
        final CountDownLatch active = new CountDownLatch(options.connections);
        final Bootstrap bootstrap = new Bootstrap().group(group)
            .channelFactory(() -> NettyTransport.channel(transport))
            .option(ChannelOption.ALLOCATOR, NettyTransport.allocator(options.direct));
        private volatile Throwable failure;

        /** Connects one channel with {@code handler}; from any thread, completing on the loop. */
        void open(ChannelHandler handler) {
            bootstrap.clone().handler(handler).connect(remote).addListener(f -> {
                if (f.isSuccess()) {
                    channels.add(((io.netty.channel.ChannelFuture) f).channel());
                } else {
                    fail(f.cause());
                }
            });
        }

        /** Runs {@code task} on the event loop and waits for it. */
        void onLoop(Runnable task) throws IOException {
            try {
                loop.submit(task).get(FINISH_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                throw new IOException("the event loop's task failed", e.getCause());
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IOException("the event loop did not run a task in " + FINISH_TIMEOUT_MS + " ms", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            check();
        }

        /** Sleeps {@code ns}, failing early when a connection failed. */
        void pauseNs(long ns) throws IOException {
            long end = System.nanoTime() + ns;
            for (long left = TimeUnit.NANOSECONDS.toMillis(ns); left > 0;
                left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())) {
                try {
                    Thread.sleep(Math.min(left, 50));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
                check();
            }
        }

        /** Waits until every connection has counted {@code finished} down (or {@link #active}). */
        void await(CountDownLatch finished, String what) throws IOException {
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FINISH_TIMEOUT_MS);
            try {
                while (!finished.await(50, TimeUnit.MILLISECONDS)) {
                    check();
                    if (System.nanoTime() - end > 0) {
                        throw new IOException(what + ": " + finished.getCount() + " connections not done in "
                            + FINISH_TIMEOUT_MS + " ms");
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
            check();
        }

        /**
         * A point's course once its connections are under way: every connection active (not for
         * {@code connect}, whose connections come and go), the warm-up, the measured interval (its start
         * and end taken on the event loop), then every connection finished.
         */
        void measure(Point p, CountDownLatch finished, String rateMetric) throws IOException {
            if (p.scenario != Scenario.CONNECT) {
                await(active, "connecting");
            }
            pauseNs(client.warmupNs());
            onLoop(p::start);
            pauseNs(client.durationNs());
            onLoop(() -> p.stop(rateMetric));
            await(finished, p.scenario.id());
        }

        void fail(Throwable t) {
            if (failure == null) {
                failure = t;
            }
        }

        private void check() throws IOException {
            Throwable t = failure;
            if (t != null) {
                throw new IOException("a Netty connection failed: " + t, t);
            }
        }

        @Override
        public void close() {
            channels.close().awaitUninterruptibly(FINISH_TIMEOUT_MS);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** A connection's handler: its header when it becomes active, failures to the loop. */
    private abstract class Handler extends ChannelInboundHandlerAdapter {
        final Loop loop;
        /** Done with the point ({@link #finish}): its close is expected. */
        boolean done;
        private final int mode;
        private final int size;
        private final int count;

        Handler(Loop loop, int mode, int size, int count) {
            this.loop = loop;
            this.mode = mode;
            this.size = size;
            this.count = count;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            NettyTransport.ready(transport, ctx.channel()); // on SDP, or the run fails
            if (transport == Transport.SDP) {
                client.described(NettyTransport.describe(ctx.channel()));
            }
            ctx.write(ctx.alloc().buffer(Conn.HEADER_BYTES).writeInt(mode).writeInt(size).writeInt(count).writeInt(0));
            active(ctx);
            loop.active.countDown();
        }

        abstract void active(ChannelHandlerContext ctx);

        ByteBuf message(ChannelHandlerContext ctx, int bytes) {
            return ctx.alloc().buffer(bytes).writeZero(bytes);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!done) {
                loop.fail(new IOException("the server closed a connection"));
            }
            ctx.fireChannelInactive();
        }

        /** This connection is done with the point: counted in {@code finished} and closed (expectedly). */
        void finish(ChannelHandlerContext ctx, CountDownLatch finished) {
            done = true;
            finished.countDown();
            ctx.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            loop.fail(cause);
            ctx.close();
        }
    }

    /** Round trips of {@code size} bytes on every connection at once, one in flight on each. */
    @Override
    public void rr(int size) throws IOException {
        Point p = new Point(Scenario.RR, size);
        CountDownLatch finished = new CountDownLatch(options.connections);
        try (Loop loop = new Loop()) {
            for (int i = 0; i < options.connections; i++) {
                loop.open(new Handler(loop, Conn.ECHO, size, 0) {
                    long startNs;
                    int got;

                    @Override
                    void active(ChannelHandlerContext ctx) {
                        send(ctx);
                    }

                    private void send(ChannelHandlerContext ctx) {
                        startNs = System.nanoTime();
                        ctx.writeAndFlush(message(ctx, size));
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf in = (ByteBuf) msg;
                        got += in.readableBytes();
                        in.release();
                        if (got < size || done) {
                            return;
                        }
                        got -= size;
                        p.completed(System.nanoTime() - startNs);
                        if (p.stopping) {
                            finish(ctx, finished);
                        } else {
                            send(ctx);
                        }
                    }
                });
            }
            loop.measure(p, finished, "msgs_per_s");
        }
        client.latencies(Scenario.RR, size, p.samples);
    }

    /** Every connection writes {@code size}-byte messages while it is writable; delivered bytes of all. */
    @Override
    public void stream(int size) throws IOException {
        Point p = new Point(Scenario.STREAM, size);
        CountDownLatch finished = new CountDownLatch(options.connections);
        long[] written = {0};
        long[] warmBytes = {0};
        long[] delivered = {0};
        long[] endNs = {0};
        try (Loop loop = new Loop()) {
            for (int i = 0; i < options.connections; i++) {
                loop.open(new Handler(loop, Conn.SINK, size, options.streamReadBytes) {
                    private ByteBuf answer;
                    private boolean filling;

                    @Override
                    void active(ChannelHandlerContext ctx) {
                        answer = ctx.alloc().heapBuffer(8);
                        fill(ctx);
                    }

                    /**
                     * Writes while the channel takes more (up to Netty's high-water mark), flushing each
                     * batch; after a few batches it lets the other connections have their turn.
                     */
                    private void fill(ChannelHandlerContext ctx) {
                        if (filling || p.stopping) {
                            return;
                        }
                        filling = true;
                        try {
                            Channel ch = ctx.channel();
                            for (int round = 0; round < 4 && ch.isWritable() && !p.stopping; round++) {
                                for (int n = 0; n < 256 && ch.isWritable(); n++) {
                                    ch.write(message(ctx, size), ch.voidPromise());
                                    written[0] += size;
                                }
                                ch.flush();
                            }
                            if (ch.isWritable() && !p.stopping) {
                                ch.eventLoop().execute(() -> fill(ctx));
                            }
                        } finally {
                            filling = false;
                        }
                    }

                    @Override
                    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                        if (ctx.channel().isWritable()) {
                            fill(ctx);
                        }
                        ctx.fireChannelWritabilityChanged();
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf in = (ByteBuf) msg;
                        in.readBytes(answer, Math.min(answer.writableBytes(), in.readableBytes()));
                        in.release();
                        if (!answer.isWritable() && !done) {
                            delivered[0] += answer.readLong();
                            answer.release();
                            endNs[0] = System.nanoTime();
                            finish(ctx, finished);
                        }
                    }
                });
            }
            loop.await(loop.active, "connecting");
            loop.pauseNs(client.warmupNs());
            loop.onLoop(() -> {
                p.start();
                warmBytes[0] = written[0];
            });
            loop.pauseNs(client.durationNs());
            loop.onLoop(() -> {
                p.stopping = true;
                for (Channel ch : loop.channels) {
                    // once what is queued is written (a shutdown fails queued writes): the server answers its byte count
                    ch.writeAndFlush(io.netty.buffer.Unpooled.EMPTY_BUFFER).addListener(f -> ((DuplexChannel) ch).shutdownOutput());
                }
            });
            loop.await(finished, "stream");
        }
        double seconds = (endNs[0] - p.t0) / 1e9;
        long bytes = delivered[0] - warmBytes[0];
        client.emit(Scenario.STREAM, size, "gbps", bytes * 8 / 1e9 / seconds, "Gbit/s");
        client.emit(Scenario.STREAM, size, "msgs_per_s", bytes / (double) size / seconds, "1/s");
        client.emit(Scenario.STREAM, size, "cpu_per_op_us", p.cpu.perOpUs(bytes / (double) size), "us");
    }

    /** {@code --window} echoed requests in flight on every connection; responses per second of all. */
    @Override
    public void rate(int size) throws IOException {
        Point p = new Point(Scenario.RATE, size);
        CountDownLatch finished = new CountDownLatch(options.connections);
        try (Loop loop = new Loop()) {
            for (int i = 0; i < options.connections; i++) {
                loop.open(new Handler(loop, Conn.ECHO, size, 0) {
                    long got;
                    int owed = options.window;
                    int inFlight;

                    @Override
                    void active(ChannelHandlerContext ctx) {
                        sendOwed(ctx);
                    }

                    private void sendOwed(ChannelHandlerContext ctx) {
                        for (; owed > 0; owed--) {
                            ctx.write(message(ctx, size), ctx.voidPromise());
                            inFlight++;
                        }
                        ctx.flush();
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf in = (ByteBuf) msg;
                        got += in.readableBytes();
                        in.release();
                        for (; got >= size; got -= size) {
                            inFlight--;
                            p.counted();
                            if (!p.stopping) {
                                owed++;
                            }
                        }
                    }

                    @Override
                    public void channelReadComplete(ChannelHandlerContext ctx) {
                        if (owed > 0) {
                            sendOwed(ctx);
                        }
                        if (p.stopping && inFlight == 0 && !done) {
                            finish(ctx, finished);
                        }
                    }
                });
            }
            loop.measure(p, finished, "msgs_per_s");
        }
    }

    /**
     * Connections opened, used for one exchange and closed, {@code --connections} of them under way at
     * once; one sample per connection, from its connect to its close.
     */
    @Override
    public void connect() throws IOException {
        Point p = new Point(Scenario.CONNECT, Conn.HEADER_BYTES);
        CountDownLatch finished = new CountDownLatch(options.connections);
        try (Loop loop = new Loop()) {
            for (int i = 0; i < options.connections; i++) {
                openOne(loop, p, finished);
            }
            loop.measure(p, finished, "conns_per_s");
        }
        client.latencies(Scenario.CONNECT, Conn.HEADER_BYTES, p.samples);
    }

    private void openOne(Loop loop, Point p, CountDownLatch finished) {
        long startNs = System.nanoTime();
        loop.open(new Handler(loop, Conn.CONNECT, 1, 0) {
            @Override
            void active(ChannelHandlerContext ctx) {
                ctx.flush();
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ((ByteBuf) msg).release();
                if (done) {
                    return;
                }
                p.completed(System.nanoTime() - startNs);
                if (p.stopping) {
                    finish(ctx, finished);
                } else {
                    done = true;
                    ctx.close();
                    openOne(loop, p, finished);
                }
            }
        });
    }
}
