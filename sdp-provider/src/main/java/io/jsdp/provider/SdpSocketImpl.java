package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.flow.engine.SdpConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.net.SocketOptions;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The {@link SocketImpl} that puts plain {@code java.net.Socket} and {@code ServerSocket} code on jsdp
 * ({@link SocketFactories} installs it JVM-wide): a client impl runs over an {@link SdpSocketChannel} in
 * blocking mode (SDP, or its TCP fallback), a server impl over an {@link SdpServerSocketChannel}.
 *
 * <p>The semantics are {@code java.net}'s, as the JDK's {@code NioSocketImpl}, not NIO's
 * ({@code java-nio-provider.md} §2.3, §3.2, §7 item 4): failures are {@link SocketException}s
 * ("Socket closed", "Connection reset", ...), {@code SO_TIMEOUT} bounds reads and accepts with
 * {@link SocketTimeoutException} and the socket stays usable, a close from another thread ends a
 * blocked read or accept with {@code SocketException("Socket closed")}. An interrupt does not end a
 * platform thread's blocked operation (the status is kept); on a virtual thread it closes the socket
 * and the operation throws {@code SocketException("Closed by interrupt")} (through
 * {@link InterruptedIOException}, which {@code Socket} and {@code ServerSocket} turn into that and
 * their own closed state, as for the JDK's impl).
 *
 * <p>Known difference: over the TCP fallback, reads, writes and accepts wait in the JDK's channels,
 * where an interrupt closes the socket on platform threads too ({@code SocketException("Closed by
 * interrupt")}).
 *
 * <p>An accepted impl never gets {@code create()} ({@code ServerSocket.implAccept}); it is given its
 * channel by the server impl's {@link #accept(SocketImpl)}.
 */
public final class SdpSocketImpl extends SocketImpl {
    private static final int ST_NEW = 0;
    private static final int ST_UNCONNECTED = 1;
    private static final int ST_CONNECTING = 2;
    private static final int ST_CONNECTED = 3;
    private static final int ST_CLOSED = 4;

    private final boolean server;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock stateLock = new ReentrantLock();

    // ---- written under stateLock; state is read without it (volatile) by the blocking operations
    private volatile int state = ST_NEW;
    private SdpSocketChannel channel;
    private SdpServerSocketChannel serverChannel;
    /** A server's bind address, bound with the backlog at {@link #listen(int)}. */
    private InetSocketAddress serverBindAddress;

    /** SO_TIMEOUT in milliseconds. */
    private volatile int timeoutMs;
    /** Guarded by readLock: the end of the stream was read (it then stays -1, as the JDK's impl). */
    private boolean readEof;

    /**
     * A new impl, for the factories (or, in tests, the protected {@code Socket(SocketImpl)} and
     * {@code ServerSocket(SocketImpl)} constructors).
     *
     * @param server true for a {@code ServerSocket}'s impl
     */
    public SdpSocketImpl(boolean server) {
        this.server = server;
    }

    /** jsdp's provider: the JVM-wide one when jsdp is installed, else one of its own. */
    private static final class Providers {
        static final SelectorProvider JSDP = SelectorProvider.provider() instanceof SdpSelectorProvider p ? p
            : new SdpSelectorProvider();
    }

    // ------------------------------------------------------------------ state

    private void ensureOpen() throws SocketException {
        int s = state;
        if (s == ST_NEW) {
            throw new SocketException("Socket not created");
        }
        if (s == ST_CLOSED) {
            throw new SocketException("Socket closed");
        }
    }

    private SdpSocketChannel connectedChannel() throws SocketException {
        stateLock.lock();
        try {
            if (state < ST_CONNECTED) {
                throw new SocketException("Not connected");
            }
            if (state == ST_CLOSED) {
                throw new SocketException("Socket closed");
            }
            return channel;
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * The channel this impl runs over, for jsdp's own tools (e.g. {@code SdpSocketOptions.TRANSPORT}
     * is also {@code socket.getOption(SdpSocketOptions.TRANSPORT)}).
     *
     * @return the client channel, or null for a server impl or before {@code create}/{@code accept}
     */
    public SocketChannel channel() {
        stateLock.lock();
        try {
            return channel;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    protected void create(boolean stream) throws IOException {
        if (!stream) {
            throw new IOException("Datagram socket creation not supported");
        }
        stateLock.lock();
        try {
            if (state != ST_NEW) {
                throw new IOException("Already created");
            }
            SelectorProvider jsdp = Providers.JSDP;
            if (server) {
                serverChannel = new SdpServerSocketChannel(jsdp, JdkProvider.get());
            } else {
                channel = new SdpSocketChannel(jsdp, JdkProvider.get());
            }
            state = ST_UNCONNECTED;
        } finally {
            stateLock.unlock();
        }
    }

    // ------------------------------------------------------------------ connect, bind, listen, accept

    @Override
    protected void connect(String host, int port) throws IOException {
        connect(new InetSocketAddress(host, port), 0);
    }

    @Override
    protected void connect(InetAddress address, int port) throws IOException {
        connect(new InetSocketAddress(address, port), 0);
    }

    @Override
    protected void connect(SocketAddress remote, int millis) throws IOException {
        if (!(remote instanceof InetSocketAddress isa)) {
            throw new IOException("Unsupported address type");
        }
        if (isa.isUnresolved()) {
            throw new UnknownHostException(isa.getHostName());
        }
        InetAddress target = isa.getAddress();
        if (target.isAnyLocalAddress()) {
            target = InetAddress.getLocalHost();
        }
        SdpSocketChannel ch;
        stateLock.lock();
        try {
            switch (state) {
                case ST_NEW -> throw new SocketException("Not created");
                case ST_CONNECTING -> throw new SocketException("Connection in progress");
                case ST_CONNECTED -> throw new SocketException("Already connected");
                case ST_CLOSED -> throw new SocketException("Socket closed");
                default -> {
                }
            }
            if (server) {
                throw new SocketException("jsdp: a server socket's impl does not connect");
            }
            state = ST_CONNECTING;
            address = target;
            port = isa.getPort();
            ch = channel;
        } finally {
            stateLock.unlock();
        }
        try {
            InetSocketAddress to = new InetSocketAddress(target, isa.getPort());
            boolean virtual = VirtualThreads.current();
            if (virtual && millis == 0) {
                ch.connect(to); // the channel's blocking connect parks, and an interrupt closes it
            } else {
                TimedConnect.connect(ch, to, TimeUnit.MILLISECONDS.toNanos(millis), virtual);
            }
            stateLock.lock();
            try {
                if (state != ST_CONNECTING) {
                    throw new SocketException("Socket closed");
                }
                state = ST_CONNECTED;
                InetSocketAddress local = ch.localAddressAnyState();
                localport = local == null ? 0 : local.getPort();
            } finally {
                stateLock.unlock();
            }
        } catch (IOException e) {
            close();
            if (e instanceof SocketTimeoutException || e instanceof java.net.ConnectException
                || e instanceof java.net.NoRouteToHostException) {
                throw e;
            }
            if (e instanceof ClosedByInterruptException) {
                throw new SocketException("Closed by interrupt");
            }
            if (e instanceof ClosedChannelException) {
                throw new SocketException("Socket closed");
            }
            throw asSocketException(e);
        }
    }

    @Override
    protected void bind(InetAddress host, int port) throws IOException {
        stateLock.lock();
        try {
            ensureOpen();
            if (localport != 0 || serverBindAddress != null) {
                throw new SocketException("Already bound");
            }
            InetSocketAddress at = new InetSocketAddress(host, port);
            if (server) {
                serverBindAddress = at; // the channel binds with the backlog, in listen
            } else {
                try {
                    channel.bind(at);
                } catch (IOException e) {
                    throw e instanceof SocketException ? e : asSocketException(e);
                }
                localport = channel.localAddressAnyState().getPort();
            }
            address = host;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    protected void listen(int backlog) throws IOException {
        stateLock.lock();
        try {
            ensureOpen();
            if (!server || serverBindAddress == null) {
                throw new SocketException("Not bound");
            }
            serverChannel.bind(serverBindAddress, backlog < 1 ? 50 : backlog);
            localport = serverChannel.localAddressAnyState().getPort();
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    protected void accept(SocketImpl si) throws IOException {
        if (!(si instanceof SdpSocketImpl accepted)) {
            throw new SocketException("jsdp: an SdpSocketImpl cannot accept into " + si.getClass().getName()
                + "; install both factories together (SocketFactories.install)");
        }
        SdpServerSocketChannel ssc;
        stateLock.lock();
        try {
            ensureOpen();
            if (localport == 0) {
                throw new SocketException("Not bound");
            }
            ssc = serverChannel;
        } finally {
            stateLock.unlock();
        }
        boolean virtual = VirtualThreads.current();
        SocketChannel ch;
        try {
            ch = ssc.blockingAccept(TimeUnit.MILLISECONDS.toNanos(timeoutMs), virtual);
        } catch (SocketTimeoutException e) {
            throw e;
        } catch (ClosedByInterruptException e) {
            close();
            throw interrupted();
        } catch (ClosedChannelException e) {
            throw new SocketException("Socket closed");
        } catch (IOException e) {
            throw asSocketException(e);
        }
        accepted.attach((SdpSocketChannel) ch);
    }

    /** Makes this (new, or created but unused) impl the accepted connection's. */
    private void attach(SdpSocketChannel ch) throws IOException {
        SdpSocketChannel unused;
        stateLock.lock();
        try {
            if (state == ST_CLOSED || state >= ST_CONNECTING) {
                ch.close();
                throw new SocketException("Not a newly created SocketImpl");
            }
            unused = channel;
            channel = ch;
            InetSocketAddress remote = ch.remoteAddressAnyState();
            InetSocketAddress local = ch.localAddressAnyState();
            address = remote.getAddress();
            port = remote.getPort();
            localport = local == null ? 0 : local.getPort();
            state = ST_CONNECTED;
        } finally {
            stateLock.unlock();
        }
        if (unused != null) {
            unused.close();
        }
    }

    // ------------------------------------------------------------------ data

    @Override
    protected InputStream getInputStream() throws IOException {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                int n = read(one, 0, 1);
                return n > 0 ? one[0] & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return SdpSocketImpl.this.read(b, off, len);
            }

            @Override
            public int available() throws IOException {
                return SdpSocketImpl.this.available();
            }

            @Override
            public void close() throws IOException {
                SdpSocketImpl.this.close();
            }
        };
    }

    @Override
    protected OutputStream getOutputStream() throws IOException {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                SdpSocketImpl.this.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                SdpSocketImpl.this.close();
            }
        };
    }

    private int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        int timeout = timeoutMs;
        long start = System.nanoTime();
        long timeoutNs = TimeUnit.MILLISECONDS.toNanos(timeout);
        if (timeout > 0) {
            if (!tryLock(readLock, timeoutNs)) {
                throw new SocketTimeoutException("Read timed out");
            }
            timeoutNs -= System.nanoTime() - start;
            if (timeoutNs <= 0) {
                readLock.unlock();
                throw new SocketTimeoutException("Read timed out");
            }
        } else {
            readLock.lock();
        }
        try {
            if (readEof) {
                return -1;
            }
            SdpSocketChannel ch = connectedChannel();
            if (ch.isInputShut()) {
                return -1;
            }
            SdpConnection c = ch.sdpConnection();
            ByteBuffer dst = ByteBuffer.wrap(b, off, len);
            int n = c != null ? sdpRead(c, dst, timeoutNs) : ch.countTcpReceived(tcpRead(ch.tcpDelegate(), dst, timeout));
            if (n < 0) {
                readEof = true;
            }
            return n;
        } finally {
            readLock.unlock();
        }
    }

    /** Reads, waiting parked in the engine: an interrupt ends it only on a virtual thread. */
    private int sdpRead(SdpConnection c, ByteBuffer dst, long timeoutNs) throws IOException {
        boolean virtual = VirtualThreads.current();
        boolean interrupted = false;
        long start = System.nanoTime();
        try {
            for (;;) {
                int n = c.read(dst);
                if (n > 0 || n == SdpConnection.EOF) {
                    return n;
                }
                if (n < 0 || state == ST_CLOSED) {
                    throw failed(c, n, false);
                }
                long leftNs = timeoutNs > 0 ? timeoutNs - (System.nanoTime() - start) : Long.MAX_VALUE;
                if (leftNs <= 0) {
                    throw new SocketTimeoutException("Read timed out");
                }
                try {
                    c.await(SdpConnection.OP_READ, leftNs);
                } catch (InterruptedException e) {
                    if (virtual) {
                        Thread.currentThread().interrupt();
                        close();
                        throw interrupted();
                    }
                    interrupted = true; // a platform thread's socket read is not interruptible
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private int tcpRead(SocketChannel tcp, ByteBuffer dst, int timeout) throws IOException {
        Socket s = tcp.socket();
        try {
            s.setSoTimeout(timeout);
            return s.getInputStream().read(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
        } catch (SocketTimeoutException e) {
            throw e;
        } catch (IOException e) {
            throw tcpFailure(e);
        }
    }

    private void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return;
        }
        writeLock.lock();
        try {
            SdpSocketChannel ch = connectedChannel();
            SdpConnection c = ch.sdpConnection();
            ByteBuffer src = ByteBuffer.wrap(b, off, len);
            if (c == null) {
                try {
                    SocketChannel tcp = ch.tcpDelegate();
                    while (src.hasRemaining()) {
                        ch.countTcpSent(tcp.write(src));
                    }
                } catch (IOException e) {
                    throw tcpFailure(e);
                }
                return;
            }
            sdpWrite(c, src);
        } finally {
            writeLock.unlock();
        }
    }

    private void sdpWrite(SdpConnection c, ByteBuffer src) throws IOException {
        boolean virtual = VirtualThreads.current();
        boolean interrupted = false;
        try {
            for (boolean first = true; src.hasRemaining(); first = false) {
                int n = c.write(src);
                if (n == SdpConnection.OUTPUT_SHUT && !first && state != ST_CLOSED) {
                    // as the JDK's: shut down while this write was under way (the kernel's EPIPE); a write
                    // that begins after the shutdown is refused as "Socket output is shutdown"
                    throw new SocketException("Broken pipe");
                }
                if (n < 0 || state == ST_CLOSED) {
                    throw failed(c, n, true);
                }
                if (n == 0) {
                    try {
                        c.await(SdpConnection.OP_WRITE, Long.MAX_VALUE);
                    } catch (InterruptedException e) {
                        if (virtual) {
                            Thread.currentThread().interrupt();
                            close();
                            throw interrupted();
                        }
                        interrupted = true;
                    }
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The {@code java.net} exception for an engine status (or a close seen between calls). */
    private SocketException failed(SdpConnection c, int status, boolean write) {
        if (status == SdpConnection.FAILED && state != ST_CLOSED) {
            return asSocketException(Exceptions.forTransfer(c.failure(), write));
        }
        if (status == SdpConnection.OUTPUT_SHUT) {
            return new SocketException("Socket output is shutdown");
        }
        return new SocketException("Socket closed");
    }

    /** The {@code java.net} exception for what the TCP delegate threw. */
    private IOException tcpFailure(IOException e) throws IOException {
        if (e instanceof ClosedByInterruptException) {
            close();
            return VirtualThreads.current() ? interrupted() : new SocketException("Closed by interrupt");
        }
        if (e instanceof ClosedChannelException) {
            return new SocketException("Socket closed");
        }
        return asSocketException(e);
    }

    /** What a virtual thread's interrupted operation throws; Socket/ServerSocket close and say "Closed by interrupt". */
    private static InterruptedIOException interrupted() {
        return new InterruptedIOException("Closed by interrupt");
    }

    @Override
    protected int available() throws IOException {
        SdpSocketChannel ch = connectedChannel();
        if (ch.isInputShut()) {
            return 0;
        }
        SdpConnection c = ch.sdpConnection();
        if (c != null) {
            return (int) Math.min(Integer.MAX_VALUE, c.available());
        }
        try {
            return ch.tcpDelegate().socket().getInputStream().available();
        } catch (IOException e) {
            throw tcpFailure(e);
        }
    }

    @Override
    protected void shutdownInput() throws IOException {
        SdpSocketChannel ch = connectedChannel();
        try {
            ch.shutdownInput();
        } catch (IOException e) {
            throw asSocketException(e);
        }
    }

    @Override
    protected void shutdownOutput() throws IOException {
        SdpSocketChannel ch = connectedChannel();
        try {
            ch.shutdownOutput();
        } catch (IOException e) {
            throw asSocketException(e);
        }
    }

    @Override
    protected boolean supportsUrgentData() {
        return false;
    }

    @Override
    protected void sendUrgentData(int data) throws IOException {
        throw new SocketException("jsdp: urgent data is not supported");
    }

    @Override
    protected void close() throws IOException {
        SdpSocketChannel ch;
        SdpServerSocketChannel ssc;
        stateLock.lock();
        try {
            if (state == ST_CLOSED) {
                return;
            }
            state = ST_CLOSED;
            ch = channel;
            ssc = serverChannel;
        } finally {
            stateLock.unlock();
        }
        // wakes a blocked read, write or accept, which then throws "Socket closed"
        if (ch != null) {
            ch.close();
        }
        if (ssc != null) {
            ssc.close();
        }
    }

    // ------------------------------------------------------------------ options

    @Override
    protected Set<SocketOption<?>> supportedOptions() {
        stateLock.lock();
        try {
            if (server) {
                return serverChannel != null ? serverChannel.supportedOptions() : Set.of();
            }
            return channel != null ? channel.supportedOptions() : Set.of();
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    protected <T> void setOption(SocketOption<T> name, T value) throws IOException {
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        ensureOpen();
        try {
            if (server) {
                serverChannel.setOption(name, value);
            } else {
                channel.setOption(name, value);
            }
        } catch (ClosedChannelException e) {
            throw new SocketException("Socket closed");
        }
    }

    @Override
    protected <T> T getOption(SocketOption<T> name) throws IOException {
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        ensureOpen();
        try {
            return server ? serverChannel.getOption(name) : channel.getOption(name);
        } catch (ClosedChannelException e) {
            throw new SocketException("Socket closed");
        }
    }

    private <T> void set(SocketOption<T> name, T value) throws IOException {
        if (server) {
            if (!serverChannel.supportedOptions().contains(name)) {
                throw new SocketException("jsdp: " + name + " is not supported on a server socket");
            }
            serverChannel.setOption(name, value);
        } else {
            channel.setOption(name, value);
        }
    }

    private <T> T get(SocketOption<T> name) throws IOException {
        if (server) {
            if (!serverChannel.supportedOptions().contains(name)) {
                throw new SocketException("jsdp: " + name + " is not supported on a server socket");
            }
            return serverChannel.getOption(name);
        }
        return channel.getOption(name);
    }

    @Override
    public void setOption(int opt, Object value) throws SocketException {
        ensureOpen();
        try {
            switch (opt) {
                case SocketOptions.SO_TIMEOUT -> {
                    int ms = intValue(value, "SO_TIMEOUT");
                    if (ms < 0) {
                        throw new IllegalArgumentException("timeout < 0");
                    }
                    timeoutMs = ms;
                }
                case SocketOptions.SO_LINGER -> set(StandardSocketOptions.SO_LINGER,
                    value instanceof Boolean on && !on ? -1 : intValue(value, "SO_LINGER"));
                case SocketOptions.TCP_NODELAY -> set(StandardSocketOptions.TCP_NODELAY, booleanValue(value, "TCP_NODELAY"));
                case SocketOptions.SO_KEEPALIVE -> set(StandardSocketOptions.SO_KEEPALIVE, booleanValue(value, "SO_KEEPALIVE"));
                case SocketOptions.SO_REUSEADDR -> set(StandardSocketOptions.SO_REUSEADDR, booleanValue(value, "SO_REUSEADDR"));
                case SocketOptions.IP_TOS -> set(StandardSocketOptions.IP_TOS, intValue(value, "IP_TOS"));
                case SocketOptions.SO_SNDBUF -> {
                    int size = intValue(value, "SO_SNDBUF");
                    if (size <= 0) {
                        throw new SocketException("SO_SNDBUF <= 0");
                    }
                    set(StandardSocketOptions.SO_SNDBUF, size);
                }
                case SocketOptions.SO_RCVBUF -> {
                    int size = intValue(value, "SO_RCVBUF");
                    if (size <= 0) {
                        throw new SocketException("SO_RCVBUF <= 0");
                    }
                    set(StandardSocketOptions.SO_RCVBUF, size);
                }
                case SocketOptions.SO_OOBINLINE -> {
                    if (booleanValue(value, "SO_OOBINLINE")) {
                        throw new SocketException("jsdp: SO_OOBINLINE is not supported (no urgent data)");
                    }
                }
                default -> throw new SocketException("Unknown option " + opt);
            }
        } catch (SocketException e) {
            throw e;
        } catch (IllegalArgumentException | IOException e) {
            throw asSocketException(e);
        }
    }

    @Override
    public Object getOption(int opt) throws SocketException {
        ensureOpen();
        try {
            switch (opt) {
                case SocketOptions.SO_TIMEOUT:
                    return timeoutMs;
                case SocketOptions.SO_BINDADDR: {
                    InetSocketAddress local = server ? serverChannel.localAddressAnyState() : channel.localAddressAnyState();
                    return local != null ? local.getAddress() : new InetSocketAddress(0).getAddress();
                }
                case SocketOptions.SO_LINGER: {
                    int s = get(StandardSocketOptions.SO_LINGER);
                    return s < 0 ? Boolean.FALSE : (Object) s;
                }
                case SocketOptions.TCP_NODELAY:
                    return get(StandardSocketOptions.TCP_NODELAY);
                case SocketOptions.SO_KEEPALIVE:
                    return get(StandardSocketOptions.SO_KEEPALIVE);
                case SocketOptions.SO_REUSEADDR:
                    return get(StandardSocketOptions.SO_REUSEADDR);
                case SocketOptions.IP_TOS:
                    return get(StandardSocketOptions.IP_TOS);
                case SocketOptions.SO_SNDBUF:
                    return get(StandardSocketOptions.SO_SNDBUF);
                case SocketOptions.SO_RCVBUF:
                    return get(StandardSocketOptions.SO_RCVBUF);
                case SocketOptions.SO_OOBINLINE:
                    return Boolean.FALSE;
                default:
                    throw new SocketException("Unknown option " + opt);
            }
        } catch (SocketException e) {
            throw e;
        } catch (IllegalArgumentException | IOException e) {
            throw asSocketException(e);
        }
    }

    private static boolean booleanValue(Object value, String desc) throws SocketException {
        if (!(value instanceof Boolean b)) {
            throw new SocketException("Bad value for " + desc);
        }
        return b;
    }

    private static int intValue(Object value, String desc) throws SocketException {
        if (!(value instanceof Integer i)) {
            throw new SocketException("Bad value for " + desc);
        }
        return i;
    }

    // ------------------------------------------------------------------ helpers

    private static SocketException asSocketException(Exception e) {
        if (e instanceof SocketException se) {
            return se;
        }
        if (e instanceof ClosedChannelException) {
            SocketException se = new SocketException("Socket closed");
            se.initCause(e);
            return se;
        }
        SocketException se = new SocketException(e.getMessage());
        se.initCause(e);
        return se;
    }

    /** Takes the lock within the time, not interruptibly (a platform thread's socket read is not). */
    private static boolean tryLock(ReentrantLock lock, long timeoutNs) {
        boolean interrupted = false;
        long start = System.nanoTime();
        try {
            for (;;) {
                long left = timeoutNs - (System.nanoTime() - start);
                if (left <= 0) {
                    return false;
                }
                try {
                    return lock.tryLock(left, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "SdpSocketImpl[" + (server ? "server " : "") + (state == ST_CLOSED ? "closed " : "") + "addr=" + address
            + ",port=" + port + ",localport=" + localport + "]";
    }
}
