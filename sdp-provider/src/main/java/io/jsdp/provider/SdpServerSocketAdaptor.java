package io.jsdp.provider;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@link SdpServerSocketChannel#socket()}: a {@link ServerSocket} whose state is the channel's, as the
 * JDK's {@code sun.nio.ch.ServerSocketAdaptor}. {@code SO_TIMEOUT} lives here and bounds
 * {@link #accept()} with {@link java.net.SocketTimeoutException}; the accepted {@link Socket} is the
 * accepted channel's adaptor. Exceptions as {@link SdpSocketAdaptor}'s.
 */
final class SdpServerSocketAdaptor extends ServerSocket {
    private final SdpServerSocketChannel ssc;
    /** SO_TIMEOUT in milliseconds. */
    private volatile int timeoutMs;

    SdpServerSocketAdaptor(SdpServerSocketChannel ssc) {
        super(new DummySocketImpl());
        this.ssc = ssc;
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        bind(local, 50);
    }

    @Override
    public void bind(SocketAddress local, int backlog) throws IOException {
        try {
            ssc.bind(local == null ? new InetSocketAddress(0) : local, backlog);
        } catch (Exception e) {
            NetExceptions.translate(e);
        }
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress local = ssc.localAddressAnyState();
        return local == null ? null : local.getAddress();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress local = ssc.localAddressAnyState();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return ssc.localAddressAnyState();
    }

    @Override
    public Socket accept() throws IOException {
        SocketChannel sc = null;
        try {
            int timeout = timeoutMs;
            if (timeout > 0) {
                sc = ssc.blockingAccept(TimeUnit.MILLISECONDS.toNanos(timeout), true);
            } else {
                sc = ssc.accept(); // as the JDK: a non-blocking channel may still have one ready
                if (sc == null) {
                    throw new IllegalBlockingModeException();
                }
            }
        } catch (Exception e) {
            NetExceptions.translate(e);
        }
        return sc.socket();
    }

    @Override
    public void close() throws IOException {
        ssc.close();
    }

    @Override
    public ServerSocketChannel getChannel() {
        return ssc;
    }

    @Override
    public boolean isBound() {
        return ssc.localAddressAnyState() != null;
    }

    @Override
    public boolean isClosed() {
        return !ssc.isOpen();
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (!ssc.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        timeoutMs = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        if (!ssc.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        return timeoutMs;
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        try {
            ssc.setOption(StandardSocketOptions.SO_REUSEADDR, on);
        } catch (IOException e) {
            throw NetExceptions.toSocketException(e);
        }
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        try {
            return ssc.getOption(StandardSocketOptions.SO_REUSEADDR);
        } catch (IOException e) {
            throw NetExceptions.toSocketException(e);
        }
    }

    @Override
    public String toString() {
        if (!isBound()) {
            return "ServerSocket[unbound]";
        }
        return "ServerSocket[addr=" + getInetAddress() + ",localport=" + getLocalPort() + "]";
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("size cannot be 0 or negative");
        }
        try {
            ssc.setOption(StandardSocketOptions.SO_RCVBUF, size);
        } catch (IOException e) {
            throw NetExceptions.toSocketException(e);
        }
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        try {
            return ssc.getOption(StandardSocketOptions.SO_RCVBUF);
        } catch (IOException e) {
            throw NetExceptions.toSocketException(e);
        }
    }

    @Override
    public <T> ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
        ssc.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return ssc.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return ssc.supportedOptions();
    }
}
