package io.jsdp.provider;

import io.jsdp.flow.engine.SdpConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SocketChannel;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@link SdpSocketChannel#socket()}: a {@link Socket} whose state is the channel's, as the JDK's
 * {@code sun.nio.ch.SocketAdaptor} is for its channels ({@code java-nio-provider.md} §2.2). Options go to
 * the channel; {@code SO_TIMEOUT} lives here and bounds reads from {@link #getInputStream()} and
 * {@link #connect(SocketAddress, int)} with {@link java.net.SocketTimeoutException}. Like the JDK's
 * adaptor, it throws the channel's exceptions: {@link java.nio.channels.ClosedChannelException},
 * {@link java.nio.channels.AsynchronousCloseException}, {@link java.nio.channels.ClosedByInterruptException},
 * and {@link IllegalBlockingModeException} when the channel is non-blocking; only the channel's unchecked
 * state exceptions become {@link SocketException}s ({@link NetExceptions}).
 */
final class SdpSocketAdaptor extends Socket {
    private final SdpSocketChannel ch;
    /** SO_TIMEOUT in milliseconds; any thread writes, readers read. */
    private volatile int timeoutMs;

    private SdpSocketAdaptor(SdpSocketChannel ch) throws SocketException {
        super(new DummySocketImpl());
        this.ch = ch;
    }

    /**
     * The adaptor of {@code ch}.
     *
     * @param ch the channel
     * @return its adaptor
     */
    static Socket create(SdpSocketChannel ch) {
        try {
            return new SdpSocketAdaptor(ch);
        } catch (SocketException e) {
            throw new IllegalStateException(e); // Socket(SocketImpl) throws only under a security manager's refusal
        }
    }

    @Override
    public void connect(SocketAddress remote) throws IOException {
        connect(remote, 0);
    }

    @Override
    public void connect(SocketAddress remote, int timeout) throws IOException {
        if (remote == null) {
            throw new IllegalArgumentException("connect: The address can't be null");
        }
        if (remote instanceof InetSocketAddress isa && isa.isUnresolved()) {
            if (!ch.isOpen()) {
                throw new SocketException("Socket is closed");
            }
            if (ch.isConnected()) {
                throw new SocketException("Already connected");
            }
            close();
            throw new UnknownHostException(isa.getHostName());
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        try {
            if (!ch.isBlocking()) {
                throw new IllegalBlockingModeException();
            }
            if (timeout > 0) {
                TimedConnect.connect(ch, remote, TimeUnit.MILLISECONDS.toNanos(timeout), true);
            } else {
                ch.connect(remote);
            }
        } catch (Exception e) {
            NetExceptions.translate(e);
        }
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        try {
            ch.bind(local);
        } catch (Exception e) {
            NetExceptions.translate(e);
        }
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress remote = ch.remoteAddressAnyState();
        return remote == null ? null : remote.getAddress();
    }

    @Override
    public InetAddress getLocalAddress() {
        if (ch.isOpen()) {
            InetSocketAddress local = ch.localAddressAnyState();
            if (local != null) {
                return local.getAddress();
            }
        }
        return new InetSocketAddress(0).getAddress();
    }

    @Override
    public int getPort() {
        InetSocketAddress remote = ch.remoteAddressAnyState();
        return remote == null ? 0 : remote.getPort();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress local = ch.localAddressAnyState();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return ch.remoteAddressAnyState();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return ch.localAddressAnyState();
    }

    @Override
    public SocketChannel getChannel() {
        return ch;
    }

    @Override
    public InputStream getInputStream() throws IOException {
        if (!ch.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (!ch.isConnected()) {
            throw new SocketException("Socket is not connected");
        }
        if (ch.isInputShut()) {
            throw new SocketException("Socket input is shutdown");
        }
        return new In();
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        if (!ch.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (!ch.isConnected()) {
            throw new SocketException("Socket is not connected");
        }
        if (ch.isOutputShut()) {
            throw new SocketException("Socket output is shutdown");
        }
        return new Out();
    }

    private <T> void set(SocketOption<T> name, T value) throws SocketException {
        try {
            ch.setOption(name, value);
        } catch (IOException e) {
            throw NetExceptions.toSocketException(e);
        }
    }

    private <T> T get(SocketOption<T> name) throws SocketException {
        try {
            return ch.getOption(name);
        } catch (IOException e) {
            throw NetExceptions.toSocketException(e);
        }
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        set(StandardSocketOptions.TCP_NODELAY, on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return get(StandardSocketOptions.TCP_NODELAY);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        set(StandardSocketOptions.SO_LINGER, on ? linger : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return get(StandardSocketOptions.SO_LINGER);
    }

    /** The channels carry no urgent data (SDP has none; the fallback follows the same rule). */
    @Override
    public void sendUrgentData(int data) throws IOException {
        throw new SocketException("jsdp: urgent data is not supported");
    }

    /** Out-of-band data is never received, so inline delivery can only be off. */
    @Override
    public void setOOBInline(boolean on) throws SocketException {
        if (!ch.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (on) {
            throw new SocketException("jsdp: SO_OOBINLINE is not supported");
        }
    }

    @Override
    public boolean getOOBInline() throws SocketException {
        if (!ch.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        return false;
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (!ch.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        timeoutMs = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        if (!ch.isOpen()) {
            throw new SocketException("Socket is closed");
        }
        return timeoutMs;
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        if (size <= 0) { // 0 is valid for the channel, not for a Socket
            throw new IllegalArgumentException("Invalid send size");
        }
        set(StandardSocketOptions.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_SNDBUF);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid receive size");
        }
        set(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_KEEPALIVE, on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return get(StandardSocketOptions.SO_KEEPALIVE);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        set(StandardSocketOptions.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(StandardSocketOptions.IP_TOS);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }

    @Override
    public void shutdownInput() throws IOException {
        try {
            ch.shutdownInput();
        } catch (Exception e) {
            NetExceptions.translate(e);
        }
    }

    @Override
    public void shutdownOutput() throws IOException {
        try {
            ch.shutdownOutput();
        } catch (Exception e) {
            NetExceptions.translate(e);
        }
    }

    @Override
    public String toString() {
        if (ch.isConnected()) {
            return "Socket[addr=" + getInetAddress() + ",port=" + getPort() + ",localport=" + getLocalPort() + "]";
        }
        return "Socket[unconnected]";
    }

    @Override
    public boolean isConnected() {
        return ch.isConnected();
    }

    @Override
    public boolean isBound() {
        return ch.localAddressAnyState() != null;
    }

    @Override
    public boolean isClosed() {
        return !ch.isOpen();
    }

    @Override
    public boolean isInputShutdown() {
        return ch.isInputShut();
    }

    @Override
    public boolean isOutputShutdown() {
        return ch.isOutputShut();
    }

    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws IOException {
        ch.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return ch.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return ch.supportedOptions();
    }

    /** Reads through the channel in blocking mode, bounded by SO_TIMEOUT. */
    private final class In extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n > 0 ? one[0] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (!ch.isBlocking()) {
                throw new IllegalBlockingModeException();
            }
            ByteBuffer dst = ByteBuffer.wrap(b, off, len);
            int timeout = timeoutMs;
            int n;
            do {
                n = timeout > 0 ? ch.blockingRead(dst, TimeUnit.MILLISECONDS.toNanos(timeout)) : ch.read(dst);
            } while (n == 0);
            return n;
        }

        @Override
        public int available() throws IOException {
            SdpConnection c = ch.sdpConnection();
            if (!ch.isOpen()) {
                throw new java.nio.channels.ClosedChannelException();
            }
            if (ch.isInputShut()) {
                return 0;
            }
            if (c != null) {
                return (int) Math.min(Integer.MAX_VALUE, c.available());
            }
            SocketChannel tcp = ch.tcpDelegate();
            return tcp == null ? 0 : tcp.socket().getInputStream().available();
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    /** Writes everything through the channel in blocking mode. */
    private final class Out extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (!ch.isBlocking()) {
                throw new IllegalBlockingModeException();
            }
            ByteBuffer src = ByteBuffer.wrap(b, off, len);
            for (boolean first = true; src.hasRemaining(); first = false) {
                try {
                    ch.write(src);
                } catch (java.nio.channels.ClosedChannelException e) {
                    // as the JDK's adaptor: output shut down while this write was under way fails it as the
                    // kernel's EPIPE does; one that begins after the shutdown finds the channel closed for output
                    if ((e instanceof java.nio.channels.AsynchronousCloseException || !first) && ch.isOpen()
                        && ch.isOutputShut()) {
                        throw new IOException("Broken pipe");
                    }
                    throw e;
                }
            }
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }
}
