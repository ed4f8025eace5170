package io.jsdp.provider;

import io.jsdp.SdpSocketOptions;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A server socket that listens on TCP and on the RDMA connection manager at the same port (architecture
 * decision 3): {@link #accept()} returns whichever connection comes first — an SDP connection from a
 * jsdp client, or a TCP one from any other client. When no SDP listener can be had (no device, or the
 * port is taken in the RDMA port space) it listens on TCP alone and says why
 * ({@link SdpSocketOptions#TRANSPORT} on the server channel).
 *
 * <p>The TCP half is a non-blocking JDK channel watched by a private JDK selector; the SDP listener's
 * accept callback wakes that selector, so a blocking {@code accept} waits for both in one place and a
 * close from another thread ends it with {@link java.nio.channels.AsynchronousCloseException}.
 *
 * <p>In a selector, the TCP half is watched by the selector's inner JDK selector and the SDP listener's
 * queue is polled when its accept callback has put the key on the selector's ready list.
 *
 * <p>{@link #socket()} is one cached {@link ServerSocket} adaptor whose state is the channel's.
 */
public final class SdpServerSocketChannel extends ServerSocketChannel implements SdpSelectable {
    private static final Set<SocketOption<?>> OPTIONS = Set.of(StandardSocketOptions.SO_RCVBUF,
        StandardSocketOptions.SO_REUSEADDR, SdpSocketOptions.TRANSPORT, SdpSocketOptions.FLOW_CONTROL);

    private final SelectorProvider jdk;
    private final ServerSocketChannel tcp;
    private final Selector waiter;
    private final ReentrantLock acceptLock = new ReentrantLock();
    private final ReentrantLock stateLock = new ReentrantLock();
    /** Guarded by stateLock. */
    private SdpListener sdp;
    private String transport;
    /** {@link SdpSocketOptions#FLOW_CONTROL} as set before bind, or null. */
    private FlowControlScheme flowControl;
    /** The one server socket adaptor, made on first use. */
    private ServerSocket adaptor;
    private final java.util.List<HybridSelector.HybridKey> selectorKeys = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The number {@link SocketRegistry} lists the channel under. */
    private final long socketId;
    /** The listeners, for the leak cleaner. */
    private final ChannelLeaks.ServerResources resources;
    /** Closes and reports this channel if it becomes garbage while open. */
    private final io.jsdp.ras.LeakDetector.Guard leakGuard;

    SdpServerSocketChannel(SelectorProvider provider, SelectorProvider jdk) throws IOException {
        super(provider);
        this.jdk = jdk;
        this.tcp = jdk.openServerSocketChannel();
        this.waiter = jdk.openSelector();
        tcp.configureBlocking(false);
        tcp.register(waiter, SelectionKey.OP_ACCEPT);
        this.socketId = SocketRegistry.add(this);
        this.resources = new ChannelLeaks.ServerResources(tcp, waiter);
        this.leakGuard = ChannelLeaks.DETECTOR.guard(this, "SERVER_CHANNEL", "unbound", resources);
        long id = socketId; // the cleaner must not hold the channel
        resources.onLeak = () -> SocketRegistry.remove(id);
    }

    @Override
    public ServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        stateLock.lock();
        try {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            tcp.bind(local, backlog);
            InetSocketAddress bound = (InetSocketAddress) tcp.getLocalAddress();
            leakGuard.describe("listening on " + bound);
            Rules.Decision d = Rules.configured().decide(Rules.Kind.BIND, bound, new SdpOptions());
            if (!d.sdp()) {
                transport = "tcp (rules: " + d.rule() + ")";
                return this;
            }
            SdpStack stack = SdpRuntime.stack();
            if (stack == null) {
                transport = "tcp (" + SdpRuntime.unavailableReason() + ")";
                return this;
            }
            try {
                SdpOptions o = d.options();
                if (flowControl != null) {
                    o.flowControl(flowControl);
                }
                flowControl = o.flowControl();
                sdp = stack.listen(bound, backlog < 1 ? 50 : backlog, o);
                resources.sdp = sdp;
                // the stack holds the listener and so this callback: it must not hold the channel (leak cleaner)
                Selector waiter = this.waiter;
                java.util.List<HybridSelector.HybridKey> selectorKeys = this.selectorKeys;
                sdp.acceptListener(() -> {
                    waiter.wakeup();
                    for (HybridSelector.HybridKey k : selectorKeys) {
                        k.wakeSelector();
                    }
                });
                transport = "sdp+tcp device=" + stack.rdmaDevice().name();
            } catch (VerbsException e) {
                // SDP was wanted here and cannot be had: said at ERROR (never silently) and counted
                String reason = Fallback.LISTEN_FAILED_OPENING + ": " + e.getMessage();
                transport = "tcp (" + reason + ")";
                SocketRegistry.onFallback(reason, bound);
                SdpRuntime.TRACE.message(TraceLevel.ERROR, "server.tcpOnly", "jsdp: " + bound + " listens on TCP only: "
                    + reason);
            }
            return this;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public SocketChannel accept() throws IOException {
        acceptLock.lock();
        try {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            if (tcp.getLocalAddress() == null) {
                throw new NotYetBoundException();
            }
            boolean completed = false;
            try {
                begin();
                for (;;) {
                    SocketChannel c = acceptOne();
                    if (c != null) {
                        completed = true;
                        return c;
                    }
                    if (!isBlocking()) {
                        completed = true;
                        return null;
                    }
                    try {
                        waiter.select();
                        waiter.selectedKeys().clear();
                    } catch (java.nio.channels.ClosedSelectorException closed) {
                        return null; // closed meanwhile: end(false) throws AsynchronousCloseException
                    }
                    if (Thread.currentThread().isInterrupted()) {
                        // the selector's own begin/end replaced ours for the wait: begin again, which sees
                        // the interrupt, closes this channel and makes end(false) throw ClosedByInterruptException
                        begin();
                        return null;
                    }
                    if (!isOpen()) {
                        return null; // end(false): AsynchronousCloseException or ClosedByInterruptException
                    }
                }
            } finally {
                end(completed);
            }
        } finally {
            acceptLock.unlock();
        }
    }

    private SocketChannel acceptOne() throws IOException {
        SdpListener l;
        stateLock.lock();
        try {
            l = sdp;
        } finally {
            stateLock.unlock();
        }
        if (l != null) {
            SdpConnection c = l.accept();
            if (c != null) {
                return new SdpSocketChannel(provider(), jdk, c);
            }
        }
        SocketChannel t = tcp.accept();
        if (t != null) {
            t.configureBlocking(true);
            return new SdpSocketChannel(provider(), jdk, t, "the peer connected over TCP");
        }
        return null;
    }

    @Override
    public void keyAdded(HybridSelector.HybridKey key) {
        selectorKeys.add(key);
        try {
            key.useDelegate(tcp);
        } catch (ClosedChannelException e) {
            // closing: the key is being cancelled
        }
    }

    @Override
    public void keyRemoved(HybridSelector.HybridKey key) {
        selectorKeys.remove(key);
    }

    @Override
    public int nativeReadyOps() {
        SdpListener l;
        stateLock.lock();
        try {
            l = sdp;
        } finally {
            stateLock.unlock();
        }
        return l != null && l.isAcceptable() ? SelectionKey.OP_ACCEPT : 0;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        return tcp.getLocalAddress();
    }

    @Override
    public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        if (name == SdpSocketOptions.TRANSPORT) {
            throw new IllegalArgumentException("jsdp.TRANSPORT is read-only");
        }
        if (!OPTIONS.contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (name == SdpSocketOptions.FLOW_CONTROL) {
            if (value == null) {
                throw new IllegalArgumentException("Invalid value 'null'");
            }
            FlowControlScheme scheme = FlowControlScheme.fromName((String) value);
            stateLock.lock();
            try {
                if (!isOpen()) {
                    throw new ClosedChannelException();
                }
                if (tcp.getLocalAddress() != null) {
                    throw new IllegalStateException("jsdp.FLOW_CONTROL is set before bind");
                }
                flowControl = scheme;
            } finally {
                stateLock.unlock();
            }
            return this;
        }
        tcp.setOption(name, value);
        return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        if (!OPTIONS.contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        if (name == SdpSocketOptions.TRANSPORT) {
            stateLock.lock();
            try {
                return (T) transport;
            } finally {
                stateLock.unlock();
            }
        }
        if (name == SdpSocketOptions.FLOW_CONTROL) {
            stateLock.lock();
            try {
                // what accepted SDP connections ask for; each reports what it negotiated
                FlowControlScheme s = flowControl != null ? flowControl : new SdpOptions().flowControl();
                return (T) s.configName();
            } finally {
                stateLock.unlock();
            }
        }
        return tcp.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return OPTIONS;
    }

    @Override
    public ServerSocket socket() {
        stateLock.lock();
        try {
            if (adaptor == null) {
                adaptor = new SdpServerSocketAdaptor(this);
            }
            return adaptor;
        } finally {
            stateLock.unlock();
        }
    }

    // ------------------------------------------------------------------ for the socket adaptor and SdpSocketImpl

    /** The bound address, also after close, or null. */
    InetSocketAddress localAddressAnyState() {
        return (InetSocketAddress) tcp.socket().getLocalSocketAddress();
    }

    /**
     * A blocking accept with a timeout (the JDK's {@code ServerSocketChannelImpl.blockingAccept}).
     *
     * @param timeoutNs the longest wait; 0 waits for ever
     * @param interruptible true for channel semantics ({@code begin}/{@code end}: an interrupt closes
     *     the channel and throws {@link java.nio.channels.ClosedByInterruptException}, a close throws
     *     {@link java.nio.channels.AsynchronousCloseException}); false for {@code java.net} semantics
     *     on a platform thread: an interrupt does not end the wait (the status is kept), a close throws
     *     {@link ClosedChannelException}
     * @return the accepted channel
     * @throws java.net.SocketTimeoutException when no connection came in time (the channel stays open)
     * @throws IOException as {@link #accept()}
     */
    SocketChannel blockingAccept(long timeoutNs, boolean interruptible) throws IOException {
        acceptLock.lock();
        try {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            if (!isBlocking()) {
                throw new java.nio.channels.IllegalBlockingModeException();
            }
            if (tcp.getLocalAddress() == null) {
                throw new NotYetBoundException();
            }
            long start = System.nanoTime();
            boolean completed = false;
            boolean interrupted = false;
            try {
                if (interruptible) {
                    begin();
                }
                for (;;) {
                    SocketChannel c = acceptOne();
                    if (c != null) {
                        completed = true;
                        return c;
                    }
                    long left = timeoutNs == 0 ? 0 : timeoutNs - (System.nanoTime() - start);
                    if (timeoutNs != 0 && left <= 0) {
                        completed = true;
                        throw new java.net.SocketTimeoutException("Accept timed out");
                    }
                    if (!interruptible) {
                        interrupted |= Thread.interrupted(); // else select returns at once
                    }
                    try {
                        waiter.select(timeoutNs == 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                        waiter.selectedKeys().clear();
                    } catch (java.nio.channels.ClosedSelectorException closed) {
                        break;
                    }
                    if (interruptible && Thread.currentThread().isInterrupted()) {
                        begin(); // as in accept(): closes the channel for the interrupt, end(false) says so
                        break;
                    }
                    if (!isOpen()) {
                        break; // end(false): AsynchronousCloseException
                    }
                }
            } finally {
                if (interruptible) {
                    end(completed);
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            throw new ClosedChannelException();
        } finally {
            acceptLock.unlock();
        }
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        SocketRegistry.remove(socketId);
        SdpListener l;
        stateLock.lock();
        try {
            l = sdp;
            sdp = null;
            resources.sdp = null;
        } finally {
            stateLock.unlock();
        }
        try {
            if (l != null) {
                l.close();
            }
            tcp.close();
        } finally {
            leakGuard.close(); // closed by the application: not a leak
            waiter.wakeup();
            waiter.close();
        }
    }

    @Override
    protected void implConfigureBlocking(boolean block) {
        // the TCP half stays non-blocking; blocking accepts wait in the private selector
    }

    /** What {@code jsdp.jar stat} lists; null while unbound. */
    io.jsdp.SdpSocketInfo describe(long id) {
        InetSocketAddress local = localAddressAnyState();
        if (local == null || !isOpen()) {
            return null;
        }
        String tr;
        SdpListener l;
        stateLock.lock();
        try {
            tr = transport;
            l = sdp;
        } finally {
            stateLock.unlock();
        }
        String reason = l != null || tr == null || !tr.startsWith("tcp (") ? "" : tr.substring(5, tr.length() - 1);
        SdpStack stack = SdpRuntime.stackIfOpen();
        return new io.jsdp.SdpSocketInfo(id, "listen", l != null ? "sdp+tcp" : "tcp", reason.isEmpty() ? "" : Fallback.of(reason).key(),
            reason, SocketRegistry.endpoint(local), "", "LISTEN", "", -1, -1, -1, -1, -1, -1, -1, -1, -1, "",
            l != null && stack != null ? stack.rdmaDevice().name() : "");
    }

    @Override
    public String toString() {
        return "SdpServerSocketChannel[" + (isOpen() ? "" : "closed ") + transport + "]";
    }
}
