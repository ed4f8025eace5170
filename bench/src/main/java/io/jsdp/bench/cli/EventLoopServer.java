package io.jsdp.bench.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The server of {@code --io selector}: one event-loop thread, as Netty, gRPC and Jetty run, serving
 * every connection on one {@link Selector} of the transport's provider, non-blocking, each as its
 * header says ({@link Conn}: echo, sink, connect). The listener and an idle JDK {@link Pipe} are
 * registered in the same selector, so an SDP selector always holds jsdp's and the JDK's channels
 * together, as event-loop applications' selectors do (their wake-up pipe).
 */
final class EventLoopServer implements BenchServer {
    private final Transport transport;
    private final boolean direct;
    private final ServerSocketChannel listener;
    private final Selector selector;
    private final Pipe pipe;
    private final Thread loop;
    private volatile boolean closed;

    EventLoopServer(Transport transport, boolean direct) throws IOException {
        this.transport = transport;
        this.direct = direct;
        this.listener = transport.listen();
        this.selector = transport.openSelector();
        this.pipe = transport.openPipe();
        pipe.source().configureBlocking(false);
        pipe.source().register(selector, SelectionKey.OP_READ);
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
        this.loop = new Thread(this::run, "bench-event-loop");
        loop.setDaemon(true);
        loop.start();
    }

    /** Where clients connect ({@link Transport#connect}). */
    @Override
    public String address() throws IOException {
        return transport.address(listener);
    }

    private void run() {
        try {
            while (!closed) {
                selector.select();
                for (SelectionKey k : selector.selectedKeys()) {
                    if (!k.isValid()) {
                        continue;
                    }
                    if (k.channel() == listener) {
                        accept();
                    } else if (k.attachment() instanceof Session) {
                        ((Session) k.attachment()).ready(k);
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (ClosedSelectorException e) {
            // closed
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                System.err.println("bench event-loop server failed: " + e);
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel ch;
        while ((ch = listener.accept()) != null) {
            try {
                transport.ready(ch, true); // TCP_NODELAY, on SDP, non-blocking
                Session s = new Session(ch);
                s.key = ch.register(selector, SelectionKey.OP_READ, s);
            } catch (IOException | RuntimeException e) {
                System.err.println("bench event-loop server: a connection failed: " + e);
                ch.close();
            }
        }
    }

    /** One connection's state; touched by the loop thread only. */
    private final class Session {
        private static final int HEADER = 0;
        private static final int ECHO_READ = 1;
        private static final int ECHO_WRITE = 2;
        private static final int SINK = 3;
        private static final int ANSWER = 4;
        private static final int AWAIT_EOF = 5;
        private static final int CLOSED = 6;

        final SocketChannel ch;
        SelectionKey key;
        int state = HEADER;
        final ByteBuffer header = ByteBuffer.allocate(Conn.HEADER_BYTES);
        ByteBuffer buffer;
        ByteBuffer answer;
        /** The state once {@link #answer} is out: {@link #AWAIT_EOF} (connect) or {@link #CLOSED} (sink). */
        int afterAnswer;
        long total;

        Session(SocketChannel ch) {
            this.ch = ch;
        }

        void ready(SelectionKey k) {
            try {
                if (k.isWritable()) {
                    writable();
                }
                if (k.isValid() && k.isReadable()) {
                    readable();
                }
            } catch (IOException | RuntimeException e) {
                if (!closed) {
                    System.err.println("bench event-loop server: serving a connection failed: " + e);
                }
                close();
            }
        }

        private void readable() throws IOException {
            for (;;) {
                switch (state) {
                    case HEADER: {
                        if (ch.read(header) < 0) {
                            close();
                            return;
                        }
                        if (header.hasRemaining()) {
                            return;
                        }
                        start(header.flip());
                        break;
                    }
                    case ECHO_READ: {
                        int n = ch.read(buffer);
                        if (n < 0) {
                            close();
                            return;
                        }
                        if (buffer.hasRemaining()) {
                            return;
                        }
                        buffer.flip();
                        state = ECHO_WRITE;
                        if (!writeOut(buffer)) {
                            return;
                        }
                        buffer.clear();
                        state = ECHO_READ;
                        break;
                    }
                    case SINK: {
                        int n = ch.read(buffer);
                        if (n < 0) {
                            answer = ByteBuffer.allocate(8).putLong(0, total);
                            state = ANSWER;
                            afterAnswer = CLOSED;
                            if (writeOut(answer)) {
                                close();
                            }
                            return;
                        }
                        if (n == 0) {
                            return;
                        }
                        total += n;
                        buffer.clear();
                        break;
                    }
                    case AWAIT_EOF: {
                        buffer.clear();
                        int n = ch.read(buffer);
                        if (n < 0) {
                            close();
                        }
                        if (n <= 0) {
                            return;
                        }
                        break;
                    }
                    default:
                        return; // writing: reads wait until the answer is out
                }
            }
        }

        private void start(ByteBuffer h) throws IOException {
            int mode = h.getInt();
            int size = h.getInt();
            int count = h.getInt();
            switch (mode) {
                case Conn.ECHO:
                    buffer = Conn.allocate(size, direct);
                    state = ECHO_READ;
                    break;
                case Conn.SINK:
                    buffer = Conn.allocate(count > 0 ? count : size, direct);
                    state = SINK;
                    break;
                case Conn.CONNECT:
                    buffer = ByteBuffer.allocate(1);
                    answer = ByteBuffer.allocate(1).put(0, (byte) 1);
                    afterAnswer = AWAIT_EOF;
                    state = writeOut(answer) ? AWAIT_EOF : ANSWER;
                    break;
                default:
                    throw new IOException("mode " + mode + " is not served by --io selector");
            }
        }

        /** Writes what {@code b} has left; false when the rest waits for OP_WRITE (interest set). */
        private boolean writeOut(ByteBuffer b) throws IOException {
            ch.write(b);
            if (b.hasRemaining()) {
                key.interestOps(SelectionKey.OP_WRITE);
                return false;
            }
            return true;
        }

        private void writable() throws IOException {
            ByteBuffer b = state == ECHO_WRITE ? buffer : answer;
            ch.write(b);
            if (b.hasRemaining()) {
                return;
            }
            key.interestOps(SelectionKey.OP_READ);
            if (state == ECHO_WRITE) {
                buffer.clear();
                state = ECHO_READ;
            } else if (afterAnswer == AWAIT_EOF) {
                state = AWAIT_EOF;
            } else {
                close();
            }
        }

        void close() {
            state = CLOSED;
            key.cancel();
            try {
                ch.close();
            } catch (IOException e) {
                // nothing more to do
            }
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        selector.close();
        listener.close();
        pipe.source().close();
        pipe.sink().close();
    }
}
