package io.jsdp.provider;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.SocketImpl;

/**
 * The impl under a socket adaptor: the adaptors override every operation and go to their channel, so
 * this impl is never used. Giving one to the protected {@code Socket(SocketImpl)} and
 * {@code ServerSocket(SocketImpl)} constructors keeps the adaptors clear of the JVM-wide socket
 * factories, which may be jsdp's own ({@code java-nio-provider.md} §2.2).
 */
final class DummySocketImpl extends SocketImpl {
    private static UnsupportedOperationException unused() {
        return new UnsupportedOperationException("jsdp: a socket adaptor's impl is never used");
    }

    @Override
    protected void create(boolean stream) {
        throw unused();
    }

    @Override
    protected void connect(String host, int port) {
        throw unused();
    }

    @Override
    protected void connect(InetAddress address, int port) {
        throw unused();
    }

    @Override
    protected void connect(SocketAddress address, int timeout) {
        throw unused();
    }

    @Override
    protected void bind(InetAddress host, int port) {
        throw unused();
    }

    @Override
    protected void listen(int backlog) {
        throw unused();
    }

    @Override
    protected void accept(SocketImpl s) {
        throw unused();
    }

    @Override
    protected InputStream getInputStream() {
        throw unused();
    }

    @Override
    protected OutputStream getOutputStream() {
        throw unused();
    }

    @Override
    protected int available() {
        throw unused();
    }

    @Override
    protected void close() throws IOException {
        // the adaptor closes its channel
    }

    @Override
    protected void sendUrgentData(int data) {
        throw unused();
    }

    @Override
    public void setOption(int optID, Object value) {
        throw unused();
    }

    @Override
    public Object getOption(int optID) {
        throw unused();
    }
}
