package io.jsdp.bench.cli;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * The client of {@code --io selector}: one event-loop thread drives {@code --connections}
 * non-blocking connections on one {@link Selector} of the transport's provider, with an idle JDK
 * {@link Pipe} registered beside them (an event-loop application's wake-up pipe), against an
 * {@link EventLoopServer}. Figures go through the {@link Client} that made it, so they have the same
 * names and checks as the blocking ones; CPU per operation is measured over the same interval.
 */
final class EventLoopClient implements EventLoopScenarios {
    private final Client client;
    private final Transport transport;
    private final String address;
    private final Options options;

    EventLoopClient(Client client, Transport transport, String address, Options options) {
        this.client = client;
        this.transport = transport;
        this.address = address;
        this.options = options;
    }

    /** One connection's state; touched by the loop thread only. */
    private static final class Link {
        final SocketChannel ch;
        SelectionKey key;
        final ByteBuffer out;
        final ByteBuffer in;
        /** rr: when the request in flight was started; connect: when the connection was opened. */
        long startNs;
        /** rate: whole requests still to write; stream: bytes written before the measurement. */
        long owed;
        long inFlight;
        boolean done;

        Link(SocketChannel ch, ByteBuffer out, ByteBuffer in) {
            this.ch = ch;
            this.out = out;
            this.in = in;
        }
    }

    private final class Loop implements AutoCloseable {
        final Selector selector;
        final Pipe pipe;
        final List<Link> links = new ArrayList<>();

        Loop() throws IOException {
            selector = transport.openSelector();
            pipe = transport.openPipe();
            pipe.source().configureBlocking(false);
            pipe.source().register(selector, SelectionKey.OP_READ);
        }

        /** Opens {@code n} connections with {@code mode}'s header, each registered for {@code ops}. */
        void open(int n, int mode, int size, int count, int ops) throws IOException {
            for (int i = 0; i < n; i++) {
                SocketChannel ch = transport.connect(address, false); // on SDP, or the run fails
                Link l = new Link(ch, Conn.allocate(size, options.direct), Conn.allocate(mode == Conn.SINK ? 8 : size,
                    options.direct));
                links.add(l);
                new Conn(ch, false).writeHeader(mode, size, count, 0);
                ch.configureBlocking(false);
                l.key = ch.register(selector, ops, l);
            }
        }

        /** Selects and hands every ready link to {@code handler}; returns the time after the wait. */
        long select(Handler handler) throws IOException {
            selector.select(100);
            long now = System.nanoTime();
            for (SelectionKey k : selector.selectedKeys()) {
                if (k.isValid() && k.attachment() instanceof Link) {
                    handler.ready((Link) k.attachment(), k, now);
                }
            }
            selector.selectedKeys().clear();
            return now;
        }

        @Override
        public void close() throws IOException {
            for (Link l : links) {
                l.ch.close();
            }
            selector.close();
            pipe.source().close();
            pipe.sink().close();
        }
    }

    @FunctionalInterface
    private interface Handler {
        void ready(Link l, SelectionKey k, long nowNs) throws IOException;
    }

    /** Fills {@code b} from {@code l}: true when full; EOF fails. */
    private static boolean fill(Link l, ByteBuffer b) throws IOException {
        if (l.ch.read(b) < 0) {
            throw new EOFException("the server closed a connection");
        }
        return !b.hasRemaining();
    }

    /** A connected channel: {@link Transport#ready} (on SDP, or the run fails), its transport reported once. */
    private void ready(SocketChannel ch) throws IOException {
        transport.ready(ch, false);
        if (transport == Transport.SDP) {
            client.described(Transport.describe(ch));
        }
    }

    /** Writes what {@code l.out} has left: true when all is out, else OP_WRITE is set as well. */
    private static boolean drain(Link l) throws IOException {
        l.ch.write(l.out);
        if (l.out.hasRemaining()) {
            l.key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            return false;
        }
        l.key.interestOps(SelectionKey.OP_READ);
        return true;
    }

    /**
     * Round trips of {@code size} bytes on every connection at once, one in flight on each; the samples
     * are the round trips of all connections.
     */
    @Override
    public void rr(int size) throws IOException {
        long[] samples = client.samples();
        int[] n = {0};
        long warmEnd = System.nanoTime() + client.warmupNs();
        long[] end = {Long.MAX_VALUE};
        boolean[] measuring = {false};
        boolean[] stopping = {false};
        try (Loop loop = new Loop()) {
            loop.open(options.connections, Conn.ECHO, size, 0, SelectionKey.OP_READ);
            long now = System.nanoTime();
            for (Link l : loop.links) {
                l.startNs = now;
                l.inFlight = 1;
                drain(l);
            }
            int active = loop.links.size();
            CpuMeter cpu = null;
            long t0 = 0;
            long count = 0;
            while (active > 0) {
                int[] finished = {0};
                long[] completed = {0};
                now = loop.select((l, k, t) -> {
                    if (k.isWritable() && l.out.hasRemaining()) {
                        drain(l);
                    }
                    if (k.isReadable() && fill(l, l.in)) {
                        if (measuring[0] && !stopping[0] && n[0] < samples.length) {
                            samples[n[0]++] = t - l.startNs;
                            completed[0]++;
                        }
                        l.in.clear();
                        if (stopping[0]) {
                            l.inFlight = 0;
                            finished[0]++;
                            l.key.interestOps(0);
                        } else {
                            l.startNs = t;
                            l.out.clear();
                            drain(l);
                        }
                    }
                });
                active -= finished[0];
                count += completed[0];
                if (!measuring[0] && now - warmEnd >= 0) {
                    measuring[0] = true;
                    t0 = now;
                    end[0] = now + client.durationNs();
                    cpu = CpuMeter.start(options.loadPid);
                } else if (measuring[0] && !stopping[0] && (now - end[0] >= 0 || n[0] >= samples.length)) {
                    stopping[0] = true;
                    client.emit(Scenario.RR, size, "msgs_per_s", count / ((now - t0) / 1e9), "1/s");
                    client.emit(Scenario.RR, size, "cpu_per_op_us", cpu.perOpUs(count), "us");
                }
            }
            client.latencies(Scenario.RR, size, n[0]);
        }
    }

    /** Every connection streams {@code size}-byte writes whenever it can; delivered bytes of all. */
    @Override
    public void stream(int size) throws IOException {
        long warmEnd = System.nanoTime() + client.warmupNs();
        try (Loop loop = new Loop()) {
            loop.open(options.connections, Conn.SINK, size, options.streamReadBytes, SelectionKey.OP_WRITE);
            long[] written = {0};
            long now = System.nanoTime();
            while (now - warmEnd < 0) {
                now = loop.select(streamHandler(written));
            }
            long warmBytes = written[0];
            CpuMeter cpu = CpuMeter.start(options.loadPid);
            long t0 = now;
            long end = t0 + client.durationNs();
            while (now - end < 0) {
                now = loop.select(streamHandler(written));
            }
            for (Link l : loop.links) {
                l.ch.shutdownOutput();
                l.key.interestOps(SelectionKey.OP_READ);
            }
            long[] delivered = {0};
            int[] answered = {0};
            while (answered[0] < loop.links.size()) {
                now = loop.select((l, k, t) -> {
                    if (k.isReadable() && fill(l, l.in)) {
                        delivered[0] += l.in.getLong(0);
                        answered[0]++;
                        l.key.interestOps(0);
                    }
                });
            }
            double seconds = (now - t0) / 1e9;
            long bytes = delivered[0] - warmBytes;
            client.emit(Scenario.STREAM, size, "gbps", bytes * 8 / 1e9 / seconds, "Gbit/s");
            client.emit(Scenario.STREAM, size, "msgs_per_s", bytes / (double) size / seconds, "1/s");
            client.emit(Scenario.STREAM, size, "cpu_per_op_us", cpu.perOpUs(bytes / (double) size), "us");
        }
    }

    private static Handler streamHandler(long[] written) {
        return (l, k, t) -> {
            if (!k.isWritable()) {
                return;
            }
            for (int i = 0; i < 16; i++) { // a few writes per turn, so that every connection gets its turn
                if (!l.out.hasRemaining()) {
                    l.out.clear();
                }
                int w = l.ch.write(l.out);
                written[0] += w;
                if (l.out.hasRemaining()) {
                    return;
                }
            }
        };
    }

    /** {@code window} echoed requests in flight on every connection; responses per second of all. */
    @Override
    public void rate(int size) throws IOException {
        long warmEnd = System.nanoTime() + client.warmupNs();
        try (Loop loop = new Loop()) {
            loop.open(options.connections, Conn.ECHO, size, 0, SelectionKey.OP_READ);
            boolean[] stopping = {false};
            long[] responses = {0};
            Handler h = (l, k, t) -> {
                if (k.isReadable()) {
                    while (fill(l, l.in)) {
                        l.in.clear();
                        l.inFlight--;
                        responses[0]++;
                        if (!stopping[0]) {
                            l.owed++;
                        }
                    }
                }
                sendOwed(l);
            };
            for (Link l : loop.links) {
                l.owed = options.window;
                sendOwed(l);
            }
            long now = System.nanoTime();
            while (now - warmEnd < 0) {
                now = loop.select(h);
            }
            long before = responses[0];
            CpuMeter cpu = CpuMeter.start(options.loadPid);
            long t0 = now;
            long end = t0 + client.durationNs();
            while (now - end < 0) {
                now = loop.select(h);
            }
            long count = responses[0] - before;
            double seconds = (now - t0) / 1e9;
            double perOp = cpu.perOpUs(count);
            stopping[0] = true;
            for (Link l : loop.links) {
                if (l.out.position() == 0) {
                    l.owed = 0; // no request half-written: none more
                } else {
                    l.owed = 1; // finish the one begun
                }
            }
            while (inFlight(loop.links) > 0) {
                loop.select(h);
            }
            client.emit(Scenario.RATE, size, "msgs_per_s", count / seconds, "1/s");
            client.emit(Scenario.RATE, size, "cpu_per_op_us", perOp, "us");
        }
    }

    private static long inFlight(List<Link> links) {
        long n = 0;
        for (Link l : links) {
            n += l.inFlight + l.owed;
        }
        return n;
    }

    /** Writes the requests {@code l} owes: the half-written one first. */
    private static void sendOwed(Link l) throws IOException {
        while (l.owed > 0) {
            boolean fresh = l.out.position() == 0;
            l.ch.write(l.out);
            if (l.out.hasRemaining()) {
                if (fresh && l.out.position() > 0) {
                    l.inFlight++; // begun: the server will answer it once it is whole
                }
                l.key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                return;
            }
            if (fresh) {
                l.inFlight++;
            }
            l.out.clear();
            l.owed--;
        }
        l.key.interestOps(SelectionKey.OP_READ);
    }

    /**
     * Connections opened non-blocking ({@code OP_CONNECT}, {@code finishConnect}), used for one
     * exchange and closed, {@code --connections} of them under way at once; one sample per connection,
     * open to close.
     */
    @Override
    public void connect() throws IOException {
        long[] samples = client.samples();
        int[] n = {0};
        boolean[] measuring = {false};
        boolean[] stopping = {false};
        long[] opened = {0};
        long warmEnd = System.nanoTime() + client.warmupNs();
        try (Loop loop = new Loop()) {
            int active = 0;
            for (int i = 0; i < options.connections; i++) {
                startConnect(loop);
                active++;
            }
            long now = System.nanoTime();
            CpuMeter cpu = null;
            long t0 = 0;
            long end = Long.MAX_VALUE;
            int[] finished = {0};
            while (active > 0) {
                finished[0] = 0;
                now = loop.select((l, k, t) -> {
                    if (k.isConnectable()) {
                        if (!l.ch.finishConnect()) {
                            return;
                        }
                        ready(l.ch);
                        l.key.interestOps(SelectionKey.OP_READ);
                        drain(l);
                    }
                    if (k.isWritable() && l.out.hasRemaining()) {
                        drain(l);
                    }
                    if (k.isReadable() && fill(l, l.in)) {
                        l.key.cancel();
                        l.ch.close();
                        loop.links.remove(l);
                        long done = System.nanoTime();
                        if (measuring[0] && !stopping[0] && n[0] < samples.length) {
                            samples[n[0]++] = done - l.startNs;
                            opened[0]++;
                        }
                        if (stopping[0]) {
                            finished[0]++;
                        } else {
                            startConnect(loop);
                        }
                    }
                });
                active -= finished[0];
                if (!measuring[0] && now - warmEnd >= 0) {
                    measuring[0] = true;
                    t0 = now;
                    end = now + client.durationNs();
                    cpu = CpuMeter.start(options.loadPid);
                } else if (measuring[0] && !stopping[0] && (now - end >= 0 || n[0] >= samples.length)) {
                    stopping[0] = true;
                    client.emit(Scenario.CONNECT, Conn.HEADER_BYTES, "conns_per_s", opened[0] / ((now - t0) / 1e9), "1/s");
                    client.emit(Scenario.CONNECT, Conn.HEADER_BYTES, "cpu_per_op_us", cpu.perOpUs(opened[0]), "us");
                }
            }
            client.latencies(Scenario.CONNECT, Conn.HEADER_BYTES, n[0]);
        }
    }

    private void startConnect(Loop loop) throws IOException {
        SocketChannel ch = transport.open();
        try {
            ch.configureBlocking(false);
            ByteBuffer header = ByteBuffer.allocate(Conn.HEADER_BYTES);
            header.putInt(Conn.CONNECT).putInt(1).putInt(0).putInt(0).flip();
            Link l = new Link(ch, header, ByteBuffer.allocate(1));
            l.startNs = System.nanoTime();
            boolean connected = ch.connect(transport.remote(address));
            l.key = ch.register(loop.selector, connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, l);
            loop.links.add(l);
            if (connected) {
                ready(ch);
                drain(l);
            }
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }
}
