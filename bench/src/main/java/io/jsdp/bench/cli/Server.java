package io.jsdp.bench.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The server side of every scenario: accepts on one listener and serves each connection as its
 * header says ({@link Conn}), a thread per connection (connect exchanges inline on the accepting
 * thread, so a connection costs no thread start).
 */
final class Server implements BenchServer {
    private final Transport transport;
    private final boolean direct;
    private final boolean poll;
    private final ServerSocketChannel listener;
    private final Thread acceptor;
    private volatile boolean closed;

    Server(Transport transport, boolean poll, boolean direct) throws IOException {
        this.transport = transport;
        this.poll = poll;
        this.direct = direct;
        this.listener = transport.listen();
        this.acceptor = new Thread(this::acceptLoop, "bench-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Where clients connect ({@link Transport#connect}). */
    @Override
    public String address() throws IOException {
        return transport.address(listener);
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("bench server: accept failed: " + e);
                }
                return;
            }
            try {
                transport.ready(ch, poll);
                Conn c = new Conn(ch, poll);
                int[] h = c.readHeader();
                if (h == null) {
                    c.close();
                } else if (h[0] == Conn.CONNECT) {
                    serveConnect(c);
                } else {
                    Thread t = new Thread(() -> serve(c, h), "bench-conn");
                    t.setDaemon(true);
                    t.start();
                }
            } catch (IOException | RuntimeException e) {
                System.err.println("bench server: a connection failed: " + e);
                closeQuietly(ch);
            }
        }
    }

    private void serveConnect(Conn c) throws IOException {
        try (c) {
            ByteBuffer one = ByteBuffer.allocate(1);
            one.put((byte) 1).flip();
            c.writeFully(one);
            one.clear();
            while (c.read(one) == 0) {
                one.clear(); // poll mode: wait for EOF
            }
        }
    }

    private void serve(Conn c, int[] h) {
        try (c) {
            switch (h[0]) {
                case Conn.ECHO: {
                    ByteBuffer b = Conn.allocate(h[1], direct);
                    while (c.readFully(b)) {
                        b.flip();
                        c.writeFully(b);
                        b.clear();
                    }
                    break;
                }
                case Conn.SINK: {
                    ByteBuffer b = Conn.allocate(h[2] > 0 ? h[2] : h[1], direct); // --stream-read-bytes, else the write size
                    long total = 0;
                    int n;
                    while ((n = c.read(b)) >= 0) {
                        total += n;
                        b.clear();
                    }
                    ByteBuffer answer = ByteBuffer.allocate(8);
                    answer.putLong(total).flip();
                    c.writeFully(answer);
                    break;
                }
                case Conn.PROGRESS: {
                    ByteBuffer b = Conn.allocate(h[1], direct);
                    while (true) {
                        for (int i = 0; i < h[2]; i++) {
                            b.clear();
                            if (!c.readFully(b)) {
                                return;
                            }
                        }
                        Conn.compute(h[3]);
                        for (int i = 0; i < h[2]; i++) {
                            b.clear();
                            c.writeFully(b);
                        }
                    }
                }
                default:
                    System.err.println("bench server: unknown mode " + h[0]);
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                System.err.println("bench server: serving mode " + h[0] + " failed: " + e);
            }
        }
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing more to do
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
    }
}
