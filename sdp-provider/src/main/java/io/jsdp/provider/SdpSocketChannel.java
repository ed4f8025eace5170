package io.jsdp.provider;

import io.jsdp.SdpSocketOptions;
import io.jsdp.ZeroCopyCompletion;
import io.jsdp.flow.engine.Failure;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.engine.SdpLimitException;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.TraceLevel;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A TCP stream channel that travels over SDP when it can and over the JDK's TCP otherwise (architecture
 * decision 3): {@code connect} tries the SDP listener at the destination first; no listener, no route
 * or no answer falls back to a JDK {@link SocketChannel} to the same address, and
 * {@link SdpSocketOptions#TRANSPORT} says which and why.
 *
 * <p>Semantics are the JDK's: blocking operations run inside {@code begin}/{@code end}, so an interrupt
 * closes the channel and throws {@link java.nio.channels.ClosedByInterruptException} and an
 * asynchronous close throws {@link java.nio.channels.AsynchronousCloseException}; a blocked SDP read or
 * write parks (virtual threads keep their carriers) and is woken by the close. One reader and one
 * writer at a time (read and write locks); state changes under the state lock.
 *
 * <p>Lock order: read lock, then write lock, then state lock; the close lock of
 * {@link java.nio.channels.spi.AbstractInterruptibleChannel} (and the thread's interrupt lock, under which
 * an interrupt closes the channel) comes before all of them. A blocked reader or writer calls
 * {@code end()}, which may wait for a close in progress, while it still holds its read or write lock; so
 * the close never waits for the read lock, nor for the write lock in blocking mode (issue 29: an
 * interrupted writer and the close its interrupt started waited for each other). As the JDK's
 * {@code SocketChannelImpl}, the close wakes the blocked threads (the engine's close signals its
 * waiters) instead of waiting for them.
 *
 * <p>In a selector the SDP side's readiness is polled when the engine's readiness listener has put the
 * key on the selector's ready list (and while it stays ready); a TCP delegate is watched by the selector's inner JDK
 * selector. A non-blocking connect starts on SDP; when {@link #finishConnect()} finds it refused it
 * starts the TCP connect and the keys move to the delegate.
 *
 * <p>{@link #socket()} is one cached {@link java.net.Socket} adaptor whose state is the channel's.
 *
 * <p>{@link #writeZeroCopy} hands device-memory buffers over for asynchronous zero copy (several in
 * flight, {@link io.jsdp.Sdp#writeZeroCopy}); the buffers sit in a queue under the write lock, the
 * engine's gathering write is called again with the same queue by whichever thread makes progress, and
 * a buffer leaves the queue (its {@code done} runs) once the engine advanced its position to its limit
 * — the peer finished reading it, or the engine copied what the peer refused.
 */
public final class SdpSocketChannel extends SocketChannel implements SdpSelectable {
    private static final Set<SocketOption<?>> OPTIONS = Set.of(StandardSocketOptions.SO_SNDBUF,
        StandardSocketOptions.SO_RCVBUF, StandardSocketOptions.SO_KEEPALIVE, StandardSocketOptions.SO_REUSEADDR,
        StandardSocketOptions.SO_LINGER, StandardSocketOptions.TCP_NODELAY, StandardSocketOptions.IP_TOS,
        SdpSocketOptions.TRANSPORT, SdpSocketOptions.USE_SDP, SdpSocketOptions.FLOW_CONTROL,
        SdpSocketOptions.ZCOPY_THRESHOLD, SdpSocketOptions.SPIN_NS);

    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final ReentrantLock stateLock = new ReentrantLock();
    private final SelectorProvider jdk;

    // ---- guarded by stateLock
    /** Options set before connect, applied to whichever transport is chosen. */
    private final Map<SocketOption<?>, Object> options = new HashMap<>();
    private SocketChannel tcp;
    private SdpConnection sdp;
    private InetSocketAddress remote;
    private String transport;
    private boolean connectPending;
    /**
     * {@link #sdp} once its connect has finished, else null; written under stateLock with the two, read
     * without it by the calls of every selection and I/O (the unlocks of a lock pair each were about
     * 8 % of an event loop's samples).
     */
    private volatile SdpConnection established;
    private boolean inputShut;
    /** The keys of the selectors the channel is registered with. */
    private final List<HybridSelector.HybridKey> selectorKeys = new CopyOnWriteArrayList<>();
    private boolean outputShut;
    /** Set when the close of the channel starts (written by the closing thread, read by writeZeroCopy). */
    private volatile boolean closing;
    /**
     * Set once the close reset or closed the SDP connection (written by the closing thread, read by an
     * interrupted waiter): from then on the peer can no longer read or write a buffer the waiter holds.
     */
    private volatile boolean connectionClosed;
    /** The one socket adaptor, made on first use. */
    private Socket adaptor;
    /** A fallback started during a selection connected or failed at once: report OP_CONNECT until finishConnect. */
    private volatile boolean connectReady;
    /** Why such a fallback connect failed, thrown by finishConnect. */
    private volatile IOException connectFailure;
    /** The number {@link SocketRegistry} lists the channel under. */
    private final long socketId;
    /** TCP payload bytes: single writers (the reader under readLock or SdpSocketImpl's, the writer likewise). */
    private volatile long tcpBytesReceived;
    private volatile long tcpBytesSent;

    // ---- asynchronous zero copy (writeZeroCopy)
    /** Buffers handed over and not finished, oldest first; guarded by writeLock. */
    private final ArrayDeque<HandOver> handOvers = new ArrayDeque<>();
    /** The engine's view of {@link #handOvers}, reused; guarded by writeLock. */
    private ByteBuffer[] handOverBuffers = new ByteBuffer[8];
    /** Finished hand-overs whose {@code done} has not run yet, in order; guarded by itself. */
    private final ArrayDeque<HandOver> finished = new ArrayDeque<>();
    /** A thread runs {@code done} calls now (one at a time, in order); guarded by {@link #finished}. */
    private boolean delivering;
    /** Hand-overs whose {@code done} has not run yet (queued or finished): OP_WRITE is not ready while any. */
    private final AtomicInteger handedOver = new AtomicInteger();

    /** A buffer handed over by {@link #writeZeroCopy}. */
    private static final class HandOver {
        final ByteBuffer buffer;
        final ZeroCopyCompletion done;
        IOException failure;

        HandOver(ByteBuffer buffer, ZeroCopyCompletion done) {
            this.buffer = buffer;
            this.done = done;
        }
    }

    /** The engine connection and TCP delegate, for the leak cleaner; written with {@link #sdp} and {@link #tcp}. */
    private final ChannelLeaks.StreamResources resources = new ChannelLeaks.StreamResources();
    /** Closes and reports this channel if it becomes garbage while open; closed by {@link #implCloseSelectableChannel}. */
    private final io.jsdp.ras.LeakDetector.Guard leakGuard;

    SdpSocketChannel(SelectorProvider provider, SelectorProvider jdk) {
        super(provider);
        this.jdk = jdk;
        this.socketId = SocketRegistry.add(this);
        this.leakGuard = ChannelLeaks.DETECTOR.guard(this, "CHANNEL", "unconnected", resources);
        long id = socketId; // the cleaner must not hold the channel
        resources.onLeak = () -> SocketRegistry.remove(id);
    }

    /** Keeps the leak cleaner's copy of what the channel holds current; under stateLock. */
    private void holdLocked() {
        established = connectPending ? null : sdp;
        resources.sdp = sdp;
        resources.tcp = tcp;
        leakGuard.describe((remote == null ? "unconnected" : "to " + remote) + (transport == null ? "" : ", " + transport));
    }

    /** An accepted SDP connection. */
    SdpSocketChannel(SelectorProvider provider, SelectorProvider jdk, SdpConnection accepted) {
        this(provider, jdk);
        this.sdp = accepted;
        this.remote = accepted.remoteAddress();
        SdpStack stack = SdpRuntime.stack();
        this.transport = describeSdp(accepted) + (stack == null ? "" : " device=" + stack.rdmaDevice().name() + " provider="
            + stack.rdmaDevice().provider());
        holdLocked();
    }

    /** An accepted TCP connection (the peer came through the TCP half of the server socket). */
    SdpSocketChannel(SelectorProvider provider, SelectorProvider jdk, SocketChannel accepted, String reason)
        throws IOException {
        this(provider, jdk);
        this.tcp = accepted;
        this.remote = (InetSocketAddress) accepted.getRemoteAddress();
        this.transport = "tcp (" + reason + ")";
        SocketRegistry.onFallback(reason, remote);
        ProviderEvents.tcpEstablished(accepted, reason, false);
        holdLocked();
    }

    private static String describeSdp(SdpConnection c) {
        return "sdp flowControl=" + c.flowControl();
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    // ------------------------------------------------------------------ connect

    @Override
    public boolean connect(SocketAddress address) throws IOException {
        InetSocketAddress target = checkAddress(address);
        stateLock.lock();
        try {
            ensureOpen();
            if (isConnected()) {
                throw new AlreadyConnectedException();
            }
            if (connectPending) {
                throw new ConnectionPendingException();
            }
            remote = target;
        } finally {
            stateLock.unlock();
        }
        if (!isBlocking()) {
            try {
                return connectNonBlocking(target);
            } catch (IOException e) {
                close();
                throw e;
            }
        }
        try {
            boolean completed = false;
            try {
                begin();
                completed = connectBlocking(target);
                return completed;
            } finally {
                end(completed);
            }
        } catch (IOException e) {
            close(); // as the JDK: a failed connect closes the channel (after end(), which would see it closed)
            throw e;
        }
    }

    /** Why this connect must not use SDP, or null when it may (socket option, rules, device). */
    private String tcpOnlyReason(Rules.Decision d) {
        stateLock.lock();
        try {
            if (Boolean.FALSE.equals(options.get(SdpSocketOptions.USE_SDP))) {
                return "SDP turned off on this socket";
            }
        } finally {
            stateLock.unlock();
        }
        if (!d.sdp()) {
            return "rules: " + d.rule();
        }
        return SdpRuntime.stack() == null ? SdpRuntime.unavailableReason() : null;
    }

    private boolean connectBlocking(InetSocketAddress target) throws IOException {
        Rules.Decision d = Rules.configured().decide(Rules.Kind.CONNECT, target, new SdpOptions());
        String reason = tcpOnlyReason(d);
        SdpStack stack = SdpRuntime.stack();
        if (reason == null) {
            SdpConnection c;
            try {
                c = stack.connect(target, sdpOptions(d.options()), boundLocal());
            } catch (VerbsException e) {
                String noResources = noResourcesReason(e);
                if (noResources == null) {
                    throw new java.net.ConnectException("jsdp: " + e.getMessage());
                }
                return startTcp(target, noResources);
            } catch (SdpLimitException e) {
                return startTcp(target, e.getMessage());
            }
            stateLock.lock();
            try {
                if (!isOpen()) {
                    c.abort();
                    throw new ClosedChannelException();
                }
                sdp = c; // so close() and interrupts reach the connect
                connectPending = true;
                holdLocked();
            } finally {
                stateLock.unlock();
            }
            try {
                if (c.awaitConnected(TimeUnit.DAYS.toNanos(1), rebegin)) {
                    stateLock.lock();
                    try {
                        connectPending = false;
                        transport = describeSdp(c) + " device=" + stack.rdmaDevice().name() + " provider="
                            + stack.rdmaDevice().provider();
                        holdLocked();
                    } finally {
                        stateLock.unlock();
                    }
                    return true;
                }
            } catch (InterruptedException e) {
                awaitInterruptClose();
                return false; // end() turns it into ClosedByInterruptException
            }
            Failure f = c.failure();
            stateLock.lock();
            try {
                sdp = null;
                holdLocked();
            } finally {
                stateLock.unlock();
            }
            if (!isOpen() || f == null) {
                return false;
            }
            reason = fallbackReason(c);
            if (reason == null) {
                throw Exceptions.forConnect(f);
            }
        }
        return startTcp(target, reason);
    }

    private boolean connectNonBlocking(InetSocketAddress target) throws IOException {
        Rules.Decision d = Rules.configured().decide(Rules.Kind.CONNECT, target, new SdpOptions());
        String reason = tcpOnlyReason(d);
        if (reason != null) {
            return startTcp(target, reason);
        }
        SdpStack stack = SdpRuntime.stack();
        SdpConnection c;
        try {
            c = stack.connect(target, sdpOptions(d.options()), boundLocal());
        } catch (VerbsException e) {
            String noResources = noResourcesReason(e);
            if (noResources == null) {
                throw new java.net.ConnectException("jsdp: " + e.getMessage());
            }
            return startTcp(target, noResources);
        } catch (SdpLimitException e) {
            return startTcp(target, e.getMessage());
        }
        stateLock.lock();
        try {
            if (!isOpen()) {
                c.abort();
                throw new ClosedChannelException();
            }
            sdp = c;
            connectPending = true;
            holdLocked();
            watchLocked();
        } finally {
            stateLock.unlock();
        }
        return false;
    }

    /**
     * Where {@link #bind} bound this channel (its TCP socket, which keeps the port for as long as the
     * channel is open), for the SDP connect to go from, as TCP's would; null when not bound.
     */
    private InetSocketAddress boundLocal() throws IOException {
        stateLock.lock();
        try {
            return tcp == null ? null : (InetSocketAddress) tcp.getLocalAddress();
        } finally {
            stateLock.unlock();
        }
    }

    /** Starts (or, in blocking mode, makes) the TCP fallback connect; the keys move to the delegate. */
    private boolean startTcp(InetSocketAddress target, String reason) throws IOException {
        SocketChannel t;
        stateLock.lock();
        try {
            ensureOpen();
            if (tcp == null) {
                tcp = jdk.openSocketChannel();
                applyOptions(tcp);
            }
            tcp.configureBlocking(isBlocking());
            t = tcp;
            transport = "tcp (" + reason + ")";
            connectPending = true;
            holdLocked();
            for (HybridSelector.HybridKey k : selectorKeys) {
                k.useDelegate(t);
            }
        } finally {
            stateLock.unlock();
        }
        SdpRuntime.TRACE.message(TraceLevel.RARE, "channel.fallback", "jsdp: " + target + " over TCP: " + reason);
        SocketRegistry.onFallback(reason, target);
        boolean done = t.connect(target);
        if (done) {
            stateLock.lock();
            try {
                connectPending = false;
            } finally {
                stateLock.unlock();
            }
            ProviderEvents.tcpEstablished(t, reason, true);
        }
        return done;
    }

    /** Installs the readiness listener that wakes our selectors, when there are any. */
    private void watchLocked() {
        if (sdp != null && !selectorKeys.isEmpty()) {
            // the engine connection holds the listener: it must not hold the channel (leak cleaner)
            List<HybridSelector.HybridKey> selectorKeys = this.selectorKeys;
            sdp.readinessListener((conn, ops) -> {
                int nio = ((ops & SdpConnection.OP_READ) != 0 ? SelectionKey.OP_READ : 0)
                    | ((ops & SdpConnection.OP_WRITE) != 0 ? SelectionKey.OP_WRITE : 0)
                    | ((ops & SdpConnection.OP_CONNECT) != 0 ? SelectionKey.OP_CONNECT : 0);
                for (HybridSelector.HybridKey k : selectorKeys) {
                    if ((nio & k.interestOpsRaw()) != 0) {
                        k.wakeSelector(); // a change the key cares about (no early select() returns otherwise)
                    }
                }
            });
        }
    }

    @Override
    public void keyAdded(HybridSelector.HybridKey key) {
        stateLock.lock();
        try {
            selectorKeys.add(key);
            if (tcp != null && sdp == null && (tcp.isConnected() || tcp.isConnectionPending())) {
                try {
                    key.useDelegate(tcp);
                } catch (ClosedChannelException e) {
                    // the channel is closing: its keys are being cancelled
                }
            }
            watchLocked();
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public void keyRemoved(HybridSelector.HybridKey key) {
        stateLock.lock();
        try {
            selectorKeys.remove(key);
            if (selectorKeys.isEmpty() && sdp != null) {
                sdp.readinessListener(null);
            }
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public io.jsdp.verbs.WakeChannel wakeChannel() {
        SdpConnection c = connectedSdp();
        return c != null ? c.wakeChannel() : null;
    }

    @Override
    public boolean wakeOnSends() {
        SdpConnection c = connectedSdp();
        return c == null || c.wakeOnSends();
    }

    /** The SDP connection once its connect has finished, else null (not SDP, or still connecting). */
    private SdpConnection connectedSdp() {
        return established;
    }

    @Override
    public int nativeReadyOps() {
        SdpConnection c = established;
        if (c != null && !connectReady) {
            return readyOpsEstablished(c);
        }
        boolean pending;
        stateLock.lock();
        try {
            c = sdp;
            pending = connectPending;
        } finally {
            stateLock.unlock();
        }
        if (connectReady) {
            return SelectionKey.OP_CONNECT; // the TCP fallback connected, or failed, at once: finishConnect tells
        }
        if (c == null) {
            return 0;
        }
        if (!pending) {
            return readyOpsEstablished(c);
        }
        if ((c.readyOps() & SdpConnection.OP_CONNECT) == 0) {
            return 0;
        }
        if (c.state() == SdpConnection.State.FAILED && fallbackReason(c) != null && !isBlocking()) {
            // Netty and Jetty take OP_CONNECT to mean finishConnect() is true (or throws): so the fallback
            // starts here, and OP_CONNECT comes from the TCP connect
            fallBackInSelection(c);
            return connectReady ? SelectionKey.OP_CONNECT : 0;
        }
        return SelectionKey.OP_CONNECT;
    }

    private int readyOpsEstablished(SdpConnection c) {
        int r = c.readyOps();
        if (handedOver.get() != 0) {
            progressHandOvers(c); // the done calls run here, before OP_WRITE is reported
            r = c.readyOps();
        }
        int ops = 0;
        if ((r & SdpConnection.OP_READ) != 0) {
            ops |= SelectionKey.OP_READ;
        }
        if ((r & SdpConnection.OP_WRITE) != 0 && handedOver.get() == 0) {
            ops |= SelectionKey.OP_WRITE;
        }
        return ops;
    }

    /**
     * The fallback reason when a connect could not have its SDP resources here (the device's memory, a
     * full /dev/shm, its keys): such a connection goes to TCP, as one to a host without jsdp does; null
     * for other failures, which the application sees.
     */
    private static String noResourcesReason(VerbsException e) {
        return e.errno() == Errno.ENOMEM ? Fallback.NO_RESOURCES_OPENING + ": " + e.getMessage() : null;
    }

    private String fallbackReason(SdpConnection c) {
        Failure f = c.failure();
        if (f == null) {
            return null;
        }
        String detail = c.failureDetail(); // "PEER_BUSY: the SDP listener at … refused: …"
        detail = detail == null ? "" : detail.substring(detail.indexOf(": ") + 2);
        return switch (f) {
            case CONNECTION_REFUSED -> "no SDP listener at " + remote;
            case PEER_BUSY -> Fallback.PEER_BUSY_OPENING + ": " + detail;
            case UNREACHABLE -> "no RDMA route to " + remote;
            case CONNECT_TIMEOUT -> "SDP connect to " + remote + " timed out";
            default -> null;
        };
    }

    /** On the selecting thread: the SDP attempt failed with a fallback reason; start the TCP connect. */
    private void fallBackInSelection(SdpConnection failed) {
        stateLock.lock();
        try {
            if (sdp != failed || !isOpen()) {
                return; // already switched, or closing
            }
            sdp = null;
            holdLocked();
        } finally {
            stateLock.unlock();
        }
        try {
            if (startTcp(remote, fallbackReason(failed))) {
                connectReady = true;
            }
        } catch (IOException e) {
            connectFailure = e;
            connectReady = true;
        }
    }

    /** The connection's settings: properties, then the rule's settings, then this socket's options. */
    private SdpOptions sdpOptions(SdpOptions fromRules) {
        stateLock.lock();
        try {
            SdpOptions o = fromRules;
            Object v;
            if ((v = options.get(StandardSocketOptions.SO_RCVBUF)) != null) {
                o.receiveBufferBytes((Integer) v);
            }
            if ((v = options.get(StandardSocketOptions.SO_SNDBUF)) != null) {
                o.sendBufferBytes((Integer) v);
            }
            if ((v = options.get(StandardSocketOptions.TCP_NODELAY)) != null) {
                o.noDelay((Boolean) v);
            }
            if ((v = options.get(StandardSocketOptions.SO_KEEPALIVE)) != null) {
                o.keepAlive((Boolean) v);
            }
            if ((v = options.get(StandardSocketOptions.SO_LINGER)) != null) {
                o.lingerSeconds((Integer) v);
            }
            if ((v = options.get(SdpSocketOptions.FLOW_CONTROL)) != null) {
                o.flowControl(FlowControlScheme.fromName((String) v));
            }
            if ((v = options.get(SdpSocketOptions.ZCOPY_THRESHOLD)) != null) {
                o.zcopyThreshold((Integer) v);
            }
            if ((v = options.get(SdpSocketOptions.SPIN_NS)) != null) {
                o.spinNs((Long) v);
            }
            return o;
        } finally {
            stateLock.unlock();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void applyOptions(SocketChannel ch) throws IOException {
        for (Map.Entry<SocketOption<?>, Object> e : options.entrySet()) {
            if (e.getKey() != SdpSocketOptions.TRANSPORT && e.getKey() != SdpSocketOptions.USE_SDP
                && e.getKey() != SdpSocketOptions.FLOW_CONTROL && e.getKey() != SdpSocketOptions.ZCOPY_THRESHOLD
                && e.getKey() != SdpSocketOptions.SPIN_NS) {
                ch.setOption((SocketOption) e.getKey(), e.getValue());
            }
        }
    }

    private static InetSocketAddress checkAddress(SocketAddress address) {
        Objects.requireNonNull(address, "address");
        if (!(address instanceof InetSocketAddress isa)) {
            throw new UnsupportedAddressTypeException();
        }
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    @Override
    public boolean finishConnect() throws IOException {
        SdpConnection c;
        SocketChannel t;
        stateLock.lock();
        try {
            ensureOpen();
            connectReady = false;
            IOException failure = connectFailure;
            if (failure != null) {
                connectFailure = null;
                stateLock.unlock();
                try {
                    close(); // as the JDK: a failed connect closes the channel
                } finally {
                    stateLock.lock();
                }
                throw failure;
            }
            if (!connectPending) {
                if (isConnected()) {
                    return true;
                }
                throw new NoConnectionPendingException();
            }
            c = sdp;
            t = tcp;
        } finally {
            stateLock.unlock();
        }
        try {
            boolean completed = false;
            boolean blocking = isBlocking(); // as the JDK: only blocking operations are interruptible
            try {
                if (blocking) {
                    begin();
                }
                boolean done = c != null ? finishSdp(c) : finishTcp(t);
                completed = true;
                return done;
            } finally {
                if (blocking) {
                    end(completed);
                }
            }
        } catch (IOException e) {
            close(); // as the JDK: a failed connect closes the channel
            throw e;
        }
    }

    private boolean finishTcp(SocketChannel t) throws IOException {
        boolean done = t.finishConnect();
        if (done) {
            String reason;
            stateLock.lock();
            try {
                connectPending = false;
                reason = tcpReason(transport);
            } finally {
                stateLock.unlock();
            }
            ProviderEvents.tcpEstablished(t, reason, true);
        }
        return done;
    }

    private boolean finishSdp(SdpConnection c) throws IOException {
        if (isBlocking()) {
            try {
                c.awaitConnected(TimeUnit.DAYS.toNanos(1), rebegin);
            } catch (InterruptedException e) {
                awaitInterruptClose();
                throw new java.nio.channels.ClosedByInterruptException();
            }
        }
        SdpConnection.State st = c.state();
        if (st == SdpConnection.State.CONNECTING || st == SdpConnection.State.HANDSHAKE) {
            return false;
        }
        if (st != SdpConnection.State.FAILED) {
            stateLock.lock();
            try {
                connectPending = false;
                selectorKeys.forEach(HybridSelector.HybridKey::pollAgain); // OP_CONNECT becomes read/write readiness
                SdpStack stack = SdpRuntime.stack();
                transport = describeSdp(c) + (stack == null ? "" : " device=" + stack.rdmaDevice().name() + " provider="
                    + stack.rdmaDevice().provider());
                holdLocked();
            } finally {
                stateLock.unlock();
            }
            return true;
        }
        Failure f = c.failure();
        stateLock.lock();
        try {
            sdp = null;
            holdLocked();
        } finally {
            stateLock.unlock();
        }
        String reason = fallbackReason(c);
        if (reason == null) {
            throw Exceptions.forConnect(f);
        }
        return startTcp(remote, reason);
    }

    @Override
    public boolean isConnected() {
        stateLock.lock();
        try {
            // as the JDK's: connected until closed here (a peer's close changes nothing)
            return isOpen() && !connectPending && (sdp != null || tcp != null && tcp.isConnected());
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public boolean isConnectionPending() {
        stateLock.lock();
        try {
            return isOpen() && connectPending;
        } finally {
            stateLock.unlock();
        }
    }

    // ------------------------------------------------------------------ data

    /** The SDP connection's counters (tests and diagnostics); null when not over SDP. */
    SdpConnection.ConnectionStats sdpStats() {
        stateLock.lock();
        try {
            return sdp == null ? null : sdp.stats();
        } finally {
            stateLock.unlock();
        }
    }

    private SdpConnection sdpOrNull() throws IOException {
        SdpConnection c = established;
        if (c != null && isOpen()) {
            return c;
        }
        stateLock.lock();
        try {
            ensureOpen();
            if (sdp == null && (tcp == null || !tcp.isConnected())) {
                throw new NotYetConnectedException();
            }
            return sdp;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        Objects.requireNonNull(dst);
        progressHandOversUnlocked();
        readLock.lock();
        try {
            SdpConnection c = sdpOrNull();
            if (c == null) {
                try {
                    return countTcpReceived(tcp.read(dst));
                } catch (ClosedByInterruptException e) {
                    close(); // the JDK's channel closed itself; so does this one
                    throw e;
                }
            }
            if (inputShut) {
                return -1;
            }
            boolean completed = false;
            boolean blocking = isBlocking(); // as the JDK: only blocking operations are interruptible
            int n = 0;
            try {
                if (blocking) {
                    begin();
                }
                for (;;) {
                    // a blocking reader calls again with the same buffer: the peer may write into it (SinkAvail)
                    n = c.read(dst, blocking ? SdpConnection.HOLDS_BUFFER : 0);
                    if (n != 0 || !dst.hasRemaining() || !isBlocking()) {
                        break;
                    }
                    try {
                        c.await(SdpConnection.OP_READ, Long.MAX_VALUE, rebegin);
                    } catch (InterruptedException e) {
                        awaitInterruptClose();
                        return 0; // end(false) throws ClosedByInterruptException
                    }
                }
                completed = n >= 0 || n != SdpConnection.CLOSED && isOpen(); // a reset by the close is the close
            } finally {
                if (blocking) {
                    end(completed);
                }
            }
            return statusToCount(c, n, false);
        } finally {
            readLock.unlock();
        }
    }

    /**
     * A write that wrote nothing and ended with status {@code n}: the output shut down by another thread
     * during the call is {@link java.nio.channels.AsynchronousCloseException}, as the JDK's write throws
     * when it finds its output closed after the call began (a call that begins after the shutdown throws
     * {@link ClosedChannelException} before it gets here).
     */
    private static void writeStatus(SdpConnection c, int n) throws IOException {
        if (n == SdpConnection.OUTPUT_SHUT) {
            throw new java.nio.channels.AsynchronousCloseException();
        }
        statusToCount(c, n, true);
    }

    private static int statusToCount(SdpConnection c, int n, boolean write) throws IOException {
        if (n >= 0 || n == SdpConnection.EOF) {
            return n;
        }
        if (n == SdpConnection.FAILED) {
            throw Exceptions.forTransfer(c.failure(), write);
        }
        throw new ClosedChannelException(); // CLOSED, OUTPUT_SHUT
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        progressHandOversUnlocked();
        readLock.lock();
        try {
            SdpConnection c = sdpOrNull();
            if (c == null) {
                try {
                    return countTcpReceived(tcp.read(dsts, offset, length));
                } catch (ClosedByInterruptException e) {
                    close(); // the JDK's channel closed itself; so does this one
                    throw e;
                }
            }
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                if (!dsts[i].hasRemaining()) {
                    continue;
                }
                int n = total == 0 ? read(dsts[i]) : c.read(dsts[i]);
                if (n == -1) {
                    return total == 0 ? -1 : total;
                }
                if (n < 0) {
                    return total; // a failure after some bytes: the next call reports it
                }
                total += n;
                if (dsts[i].hasRemaining()) {
                    break;
                }
            }
            return total;
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        Objects.requireNonNull(src);
        progressHandOversUnlocked();
        writeLock.lock();
        try {
            SdpConnection c = sdpOrNull();
            if (c == null) {
                try {
                    return (int) countTcpSent(tcp.write(src));
                } catch (ClosedByInterruptException e) {
                    close(); // the JDK's channel closed itself; so does this one
                    throw e;
                }
            }
            if (outputShut) {
                throw new ClosedChannelException();
            }
            if (handedOver.get() != 0 && !handOvers.isEmpty()) {
                return 0; // the handed-over buffers go first (stream order); the channel is non-blocking
            }
            boolean completed = false;
            boolean blocking = isBlocking(); // as the JDK: only blocking operations are interruptible
            int total = 0;
            int n = 0;
            try {
                if (blocking) {
                    begin();
                }
                for (;;) {
                    // a blocking writer calls again with the same buffer: the peer may read it in place
                    n = c.write(src, blocking ? SdpConnection.HOLDS_BUFFER : 0);
                    if (n < 0) {
                        break;
                    }
                    total += n;
                    if (!src.hasRemaining() || !isBlocking()) {
                        break;
                    }
                    if (n == 0) {
                        try {
                            c.await(SdpConnection.OP_WRITE, Long.MAX_VALUE, rebegin);
                        } catch (InterruptedException e) {
                            awaitInterruptClose();
                            return total; // end(false) throws ClosedByInterruptException
                        }
                    }
                }
                completed = n >= 0 || n != SdpConnection.CLOSED && isOpen(); // a reset by the close is the close
            } finally {
                if (blocking) {
                    end(completed);
                }
            }
            if (n < 0 && total == 0) {
                writeStatus(c, n);
            }
            return total;
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        progressHandOversUnlocked();
        writeLock.lock();
        try {
            SdpConnection c = sdpOrNull();
            if (c == null) {
                try {
                    return countTcpSent(tcp.write(srcs, offset, length));
                } catch (ClosedByInterruptException e) {
                    close(); // the JDK's channel closed itself; so does this one
                    throw e;
                }
            }
            if (!isBlocking()) {
                long total = 0;
                for (int i = offset; i < offset + length; i++) {
                    if (!srcs[i].hasRemaining()) {
                        continue;
                    }
                    int n = write(srcs[i]);
                    total += n;
                    if (srcs[i].hasRemaining()) {
                        break;
                    }
                }
                return total;
            }
            if (outputShut) {
                throw new ClosedChannelException();
            }
            // blocking: the engine may advertise several buffers at once (asynchronous zero copy); it
            // returns 0 until the peer is done with them, and this loop holds them meanwhile
            boolean completed = false;
            long total = 0;
            long n = 0;
            try {
                begin();
                for (;;) {
                    n = c.write(srcs, offset, length, SdpConnection.HOLDS_BUFFER);
                    if (n < 0) {
                        break;
                    }
                    total += n;
                    if (!hasRemaining(srcs, offset, length) || !isBlocking()) {
                        break;
                    }
                    if (n == 0) {
                        try {
                            c.await(SdpConnection.OP_WRITE, Long.MAX_VALUE, rebegin);
                        } catch (InterruptedException e) {
                            awaitInterruptClose();
                            return total; // end(false) throws ClosedByInterruptException
                        }
                    }
                }
                completed = n >= 0 || n != SdpConnection.CLOSED && isOpen(); // a reset by the close is the close
            } finally {
                end(completed);
            }
            if (n < 0 && total == 0) {
                writeStatus(c, (int) n);
            }
            return total;
        } finally {
            writeLock.unlock();
        }
    }

    /**
     * Asynchronous zero copy: hands the buffers over and returns at once (see
     * {@link io.jsdp.Sdp#writeZeroCopy}, the public entry, for the contract). The buffers belong to the
     * channel until {@code done} runs for each, in order; after it no peer reads the buffer.
     *
     * @param srcs buffers from {@link io.jsdp.Sdp#allocateDirect}
     * @param done told once per buffer when it is the application's again
     * @throws IOException as {@link io.jsdp.Sdp#writeZeroCopy}
     */
    public void writeZeroCopy(ByteBuffer[] srcs, ZeroCopyCompletion done) throws IOException {
        Objects.requireNonNull(srcs);
        Objects.requireNonNull(done);
        io.jsdp.zcopy.ZeroCopy zc = SdpRuntime.zeroCopy();
        for (int i = 0; i < srcs.length; i++) {
            ByteBuffer b = Objects.requireNonNull(srcs[i]);
            if (!b.isDirect() || zc == null || !zc.isDeviceMemory(b)) {
                throw new IllegalArgumentException("writeZeroCopy takes buffers from Sdp.allocateDirect only (buffer " + i
                    + " is " + (b.isDirect() ? "another direct buffer" : "a heap buffer")
                    + "; a slice or duplicate counts as another buffer)");
            }
            for (int j = 0; j < i; j++) {
                if (srcs[j] == b) {
                    throw new IllegalArgumentException("buffer " + i + " is given twice");
                }
            }
        }
        SdpConnection c;
        writeLock.lock();
        try {
            c = sdpOrNull();
            if (c == null) {
                throw new UnsupportedOperationException("writeZeroCopy needs an SDP connection; this one is " + transport);
            }
            if (isBlocking()) {
                throw new IllegalBlockingModeException();
            }
            for (HandOver h : handOvers) {
                for (ByteBuffer b : srcs) {
                    if (h.buffer == b) {
                        throw new IllegalArgumentException("a buffer is still handed over (its done has not run)");
                    }
                }
            }
            if (c.state() == SdpConnection.State.FAILED) {
                throw Exceptions.forTransfer(c.failure(), true);
            }
            stateLock.lock();
            try {
                // shutdownOutput checks handedOver under stateLock; a close that began fails the hand-overs
                // once it has the write lock, which it takes after setting closing
                if (outputShut || closing) {
                    throw new ClosedChannelException();
                }
                for (ByteBuffer b : srcs) {
                    handOvers.add(new HandOver(b, done));
                    handedOver.incrementAndGet();
                }
            } finally {
                stateLock.unlock();
            }
        } finally {
            writeLock.unlock();
        }
        progressHandOvers(c);
    }

    /**
     * A read or write lets the hand-overs progress before it takes its lock, so that {@code done} never
     * runs under the read or write lock: a {@code done} that registers the channel (regLock) must not
     * wait for a configureBlocking that holds regLock and waits for those locks. Nested calls (a
     * gathering write's per-buffer writes) find the lock held and leave it to the outer call.
     */
    private void progressHandOversUnlocked() {
        if (handedOver.get() != 0 && !readLock.isHeldByCurrentThread() && !writeLock.isHeldByCurrentThread()) {
            progressHandOvers(sdpConnection());
        }
    }

    /**
     * Lets the engine go on with the handed-over buffers and runs {@code done} for those it finished.
     * Called by the writer, the reader and selections; when another thread holds the write lock it
     * makes the progress itself (it is a writer, which calls this first).
     */
    private void progressHandOvers(SdpConnection c) {
        if (c == null || !writeLock.tryLock()) {
            return;
        }
        try {
            int n = handOvers.size();
            if (n == 0) {
                return;
            }
            if (handOverBuffers.length < n) {
                handOverBuffers = new ByteBuffer[Math.max(n, 2 * handOverBuffers.length)];
            }
            int i = 0;
            for (HandOver h : handOvers) {
                handOverBuffers[i++] = h.buffer;
            }
            long r = c.write(handOverBuffers, 0, n, SdpConnection.HOLDS_BUFFER);
            Arrays.fill(handOverBuffers, 0, n, null);
            if (r >= 0) {
                collectFinishedLocked();
            } else {
                // FAILED, OUTPUT_SHUT (a shutdown the hand-overs raced), CLOSED: none of them will finish
                failHandOversLocked(r == SdpConnection.FAILED ? Exceptions.forTransfer(c.failure(), true)
                    : r == SdpConnection.CLOSED ? new AsynchronousCloseException() : new ClosedChannelException());
            }
        } finally {
            writeLock.unlock();
        }
        deliverCompletions();
    }

    /** Moves the hand-overs the engine finished (position at limit), oldest first, to {@link #finished}; under writeLock. */
    private void collectFinishedLocked() {
        while (!handOvers.isEmpty() && !handOvers.peekFirst().buffer.hasRemaining()) {
            HandOver h = handOvers.pollFirst();
            synchronized (finished) {
                finished.addLast(h);
            }
        }
    }

    /**
     * The close, before it resets the connection: takes what the peer already finished (a SrcAvail it
     * acknowledged, a SinkAvail WRITE that completed) so that their {@code done} reports success; starts
     * nothing new. Under writeLock.
     */
    private void settleHandOversLocked(SdpConnection c) {
        int n = handOvers.size();
        if (n == 0) {
            return;
        }
        if (handOverBuffers.length < n) {
            handOverBuffers = new ByteBuffer[Math.max(n, 2 * handOverBuffers.length)];
        }
        int i = 0;
        for (HandOver h : handOvers) {
            handOverBuffers[i++] = h.buffer;
        }
        c.settle(handOverBuffers, 0, n);
        Arrays.fill(handOverBuffers, 0, n, null);
        collectFinishedLocked();
    }

    /** Ends every hand-over not finished with {@code failure}; under writeLock. */
    private void failHandOversLocked(IOException failure) {
        while (!handOvers.isEmpty()) {
            HandOver h = handOvers.pollFirst();
            h.failure = failure;
            synchronized (finished) {
                finished.addLast(h);
            }
        }
    }

    /**
     * Runs the {@code done} calls of finished hand-overs, in order, one thread at a time. A {@code done}
     * that throws does not stop the others nor the caller (which may be a selection): the exception goes
     * to the thread's uncaught-exception handler, as a {@code CompletionHandler}'s does in the JDK's
     * channel groups. When the last hand-over is delivered, the selectors watching for OP_WRITE are told:
     * a selection that polled while another thread held the write lock saw OP_WRITE masked, and the
     * engine's readiness, which has not changed, would not signal it again.
     */
    private void deliverCompletions() {
        synchronized (finished) {
            if (delivering || finished.isEmpty()) {
                return; // the thread delivering (maybe this one, from a done call) runs them
            }
            delivering = true;
        }
        boolean clean = false;
        try {
            for (;;) {
                HandOver h;
                synchronized (finished) {
                    h = finished.pollFirst();
                    if (h == null) {
                        delivering = false;
                        clean = true;
                        break;
                    }
                }
                int left = handedOver.decrementAndGet();
                try {
                    h.done.completed(h.buffer, h.failure);
                } catch (Throwable t) {
                    doneThrew(t);
                }
                if (left == 0) {
                    signalWritable();
                }
            }
        } finally {
            if (!clean) {
                synchronized (finished) {
                    delivering = false; // an Error in the handler itself: the next progress delivers the rest
                }
            }
        }
    }

    /** A {@code done} call threw: the current thread's uncaught-exception handler gets it; nothing else changes. */
    private static void doneThrew(Throwable t) {
        Thread me = Thread.currentThread();
        try {
            me.getUncaughtExceptionHandler().uncaughtException(me, t);
        } catch (Throwable ignored) {
            // a handler that throws too: the exception is dropped, as the JDK drops the handler's
        }
    }

    /** OP_WRITE may be ready now that no buffer is handed over: the selectors that watch for it poll the key again. */
    private void signalWritable() {
        for (HybridSelector.HybridKey k : selectorKeys) {
            if (k.isValid() && (k.interestOpsRaw() & SelectionKey.OP_WRITE) != 0) {
                k.wakeSelector();
            }
        }
    }

    private static boolean hasRemaining(ByteBuffer[] srcs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (srcs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public SocketChannel shutdownInput() throws IOException {
        return shutdown(true);
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        return shutdown(false);
    }

    private SocketChannel shutdown(boolean input) throws IOException {
        stateLock.lock();
        try {
            ensureOpen();
            if (!isConnected()) {
                throw new NotYetConnectedException(); // also while a connect is pending, as the JDK's
            }
            if (sdp == null) {
                if (input) {
                    tcp.shutdownInput();
                } else {
                    tcp.shutdownOutput();
                }
            } else if (input) {
                inputShut = true;
                sdp.shutdownInput();
            } else {
                if (handedOver.get() != 0) { // writeZeroCopy hands over under stateLock too
                    throw new IllegalStateException("buffers handed over by writeZeroCopy are not finished yet");
                }
                outputShut = true;
                sdp.shutdownOutput();
            }
            return this;
        } finally {
            stateLock.unlock();
        }
    }

    // ------------------------------------------------------------------ addresses and options

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        stateLock.lock();
        try {
            ensureOpen();
            if (tcp == null) {
                tcp = jdk.openSocketChannel();
                tcp.configureBlocking(isBlocking());
                applyOptions(tcp);
                holdLocked();
            }
            tcp.bind(local);
            return this;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        stateLock.lock();
        try {
            ensureOpen();
            if (sdp != null) {
                return sdp.localAddress();
            }
            return tcp == null ? null : tcp.getLocalAddress();
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        stateLock.lock();
        try {
            ensureOpen();
            return isConnected() ? remote : null;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        if (!OPTIONS.contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (name == SdpSocketOptions.TRANSPORT) {
            throw new IllegalArgumentException("jsdp.TRANSPORT is read-only");
        }
        if (value == null && name != StandardSocketOptions.SO_LINGER) {
            throw new IllegalArgumentException("Invalid value 'null'");
        }
        stateLock.lock();
        try {
            ensureOpen();
            if (name == SdpSocketOptions.USE_SDP || name == SdpSocketOptions.FLOW_CONTROL) {
                if (sdp != null || tcp != null && (tcp.isConnected() || tcp.isConnectionPending())) {
                    throw new IllegalStateException(name + " is for unconnected sockets");
                }
                if (name == SdpSocketOptions.FLOW_CONTROL) {
                    FlowControlScheme.fromName((String) value); // IllegalArgumentException names the choices
                }
            } else if (name == SdpSocketOptions.ZCOPY_THRESHOLD) {
                int t = (Integer) value;
                if (t != 0 && t < SdpOptions.ZCOPY_THRESHOLD_MIN) {
                    throw new IllegalArgumentException("Invalid value '" + value + "' (0 or at least "
                        + SdpOptions.ZCOPY_THRESHOLD_MIN + ")");
                }
                if (sdp != null) {
                    sdp.zcopyThreshold(t);
                }
            } else if (name == SdpSocketOptions.SPIN_NS) {
                if ((Long) value < 0) {
                    throw new IllegalArgumentException("Invalid value '" + value + "'");
                }
                if (sdp != null) {
                    sdp.spinNs((Long) value);
                }
            } else if (tcp != null) {
                tcp.setOption(name, value); // validates as the JDK does
            } else if (name.type() == Integer.class && (Integer) value < 0 && name != StandardSocketOptions.SO_LINGER) {
                throw new IllegalArgumentException("Invalid value '" + value + "'");
            }
            options.put(name, value);
            if (sdp != null && name == StandardSocketOptions.TCP_NODELAY) {
                sdp.noDelay((Boolean) value);
            }
            if (sdp != null && name == StandardSocketOptions.SO_LINGER) {
                sdp.lingerSeconds(value == null ? -1 : (Integer) value); // close reads it
            }
            return this;
        } finally {
            stateLock.unlock();
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        if (!OPTIONS.contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        stateLock.lock();
        try {
            ensureOpen();
            if (name == SdpSocketOptions.TRANSPORT) {
                return (T) transport;
            }
            if (name == SdpSocketOptions.USE_SDP) {
                return (T) options.getOrDefault(name, Boolean.TRUE);
            }
            if (name == SdpSocketOptions.FLOW_CONTROL) {
                if (sdp != null) {
                    return (T) sdp.flowControl(); // negotiated (before the handshake: what this side asks for)
                }
                if (tcp != null && (tcp.isConnected() || tcp.isConnectionPending())) {
                    return null;
                }
                Object set = options.get(name);
                return (T) (set != null ? FlowControlScheme.fromName((String) set).configName()
                    : new SdpOptions().flowControl().configName());
            }
            if (name == SdpSocketOptions.ZCOPY_THRESHOLD) {
                return (T) options.getOrDefault(name, new SdpOptions().zcopyThreshold());
            }
            if (name == SdpSocketOptions.SPIN_NS) {
                return (T) (Long) (sdp != null ? sdp.spinNs() : (Long) options.getOrDefault(name, new SdpOptions().spinNs()));
            }
            if (tcp != null && sdp == null) {
                return tcp.getOption(name);
            }
            Object v = options.get(name);
            if (v == null) {
                v = defaultOf(name);
            }
            return (T) v;
        } finally {
            stateLock.unlock();
        }
    }

    private static Object defaultOf(SocketOption<?> name) {
        if (name == StandardSocketOptions.SO_LINGER) {
            return -1;
        }
        if (name == StandardSocketOptions.SO_RCVBUF || name == StandardSocketOptions.SO_SNDBUF) {
            SdpOptions d = new SdpOptions();
            return (name == StandardSocketOptions.SO_RCVBUF ? d.receiveBuffers() : d.sendBuffers()) * d.payloadBytes();
        }
        if (name == StandardSocketOptions.IP_TOS) {
            return 0;
        }
        return Boolean.FALSE;
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return OPTIONS;
    }

    @Override
    public Socket socket() {
        stateLock.lock();
        try {
            if (adaptor == null) {
                adaptor = SdpSocketAdaptor.create(this);
            }
            return adaptor;
        } finally {
            stateLock.unlock();
        }
    }

    // ------------------------------------------------------------------ for the socket adaptor and SdpSocketImpl

    /** The write lock: tests hold it to stand for another thread's progress on the hand-overs. */
    ReentrantLock writeLockForTest() {
        return writeLock;
    }

    /** The state lock: tests hold it to stop a close before it reaches the connection. */
    ReentrantLock stateLockForTest() {
        return stateLock;
    }

    /** The SDP connection, or null (not connected, or over TCP); not cleared by close. */
    SdpConnection sdpConnection() {
        stateLock.lock();
        try {
            return sdp;
        } finally {
            stateLock.unlock();
        }
    }

    /** The JDK channel of the TCP fallback (or of an early bind), or null. */
    SocketChannel tcpDelegate() {
        stateLock.lock();
        try {
            return tcp;
        } finally {
            stateLock.unlock();
        }
    }

    /** Whether the input was shut down, whatever the transport and the open state. */
    boolean isInputShut() {
        stateLock.lock();
        try {
            return sdp != null ? inputShut : tcp != null && tcp.socket().isInputShutdown();
        } finally {
            stateLock.unlock();
        }
    }

    /** Whether the output was shut down, whatever the transport and the open state. */
    boolean isOutputShut() {
        stateLock.lock();
        try {
            return sdp != null ? outputShut : tcp != null && tcp.socket().isOutputShutdown();
        } finally {
            stateLock.unlock();
        }
    }

    /** The local address, also after close (as the JDK's adaptor reports it), or null when unbound. */
    InetSocketAddress localAddressAnyState() {
        stateLock.lock();
        try {
            if (sdp != null) {
                return sdp.localAddress();
            }
            return tcp == null ? null : (InetSocketAddress) tcp.socket().getLocalSocketAddress();
        } finally {
            stateLock.unlock();
        }
    }

    /** The remote address once connected, also after close, or null. */
    InetSocketAddress remoteAddressAnyState() {
        stateLock.lock();
        try {
            return connectPending || sdp == null && tcp == null ? null : remote;
        } finally {
            stateLock.unlock();
        }
    }

    /**
     * The adaptor's blocking read with a timeout (the JDK's {@code SocketChannelImpl.blockingRead}):
     * channel semantics ({@code begin}/{@code end}), and {@link SocketTimeoutException} when nothing
     * came in time, the channel staying open.
     *
     * @param dst where the bytes go
     * @param timeoutNs the longest wait, more than 0
     * @return bytes read, or -1 at the end of the stream
     * @throws IOException as {@link #read(ByteBuffer)}, or the timeout
     */
    int blockingRead(ByteBuffer dst, long timeoutNs) throws IOException {
        readLock.lock();
        try {
            if (!isBlocking()) {
                throw new java.nio.channels.IllegalBlockingModeException();
            }
            SdpConnection c = sdpOrNull();
            if (c == null) {
                return tcpTimedRead(dst, timeoutNs);
            }
            if (inputShut) {
                return -1;
            }
            long start = System.nanoTime();
            boolean completed = false;
            boolean blocking = isBlocking(); // as the JDK: only blocking operations are interruptible
            int n = 0;
            try {
                if (blocking) {
                    begin();
                }
                for (;;) {
                    n = c.read(dst, SdpConnection.HOLDS_BUFFER); // the peer may write into dst (SinkAvail)
                    if (n != 0 || !dst.hasRemaining()) {
                        break;
                    }
                    long left = timeoutNs - (System.nanoTime() - start);
                    if (left <= 0) {
                        // an advertised buffer is withdrawn before the read leaves; bytes written meanwhile are read
                        n = c.cancelRead(dst);
                        if (n != 0) {
                            break;
                        }
                        completed = true;
                        throw new SocketTimeoutException("Read timed out");
                    }
                    try {
                        c.await(SdpConnection.OP_READ, left, rebegin);
                    } catch (InterruptedException e) {
                        awaitInterruptClose();
                        return 0; // end(false) throws ClosedByInterruptException
                    }
                }
                completed = n >= 0 || n != SdpConnection.CLOSED && isOpen(); // a reset by the close is the close
            } finally {
                if (blocking) {
                    end(completed);
                }
            }
            return statusToCount(c, n, false);
        } finally {
            readLock.unlock();
        }
    }

    /** A timed read on the TCP delegate, through its own adaptor's stream, which honours SO_TIMEOUT. */
    private int tcpTimedRead(ByteBuffer dst, long timeoutNs) throws IOException {
        Socket s = tcp.socket();
        if (s.isInputShutdown()) {
            return -1;
        }
        s.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(timeoutNs))));
        try {
            int n = s.getInputStream().read(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
            if (n > 0) {
                dst.position(dst.position() + n);
            }
            return countTcpReceived(n);
        } catch (java.nio.channels.ClosedByInterruptException e) {
            close(); // the delegate closed itself; so does the channel (as a JDK channel would)
            throw e;
        }
    }

    // ------------------------------------------------------------------ close and blocking mode

    /**
     * Puts this channel's interrupt hook back after the engine waited in a JDK selector, whose own
     * {@code begin}/{@code end} replaced and then removed it ({@code begin()} again; it also closes the
     * channel for an interrupt that came meanwhile, as the hook would have). Only inside a blocking
     * section, between this channel's {@code begin()} and {@code end()}.
     */
    private final Runnable rebegin = this::begin;

    /**
     * After an interrupt woke a blocked SDP wait: keeps the interrupt status and waits until the close the
     * interrupt causes has reset the connection, so that {@code end} sees it and throws
     * ClosedByInterruptException — and so that the peer can no longer write a buffer this reader advertised
     * (SinkAvail) or read one this writer advertised (SrcAvail) once the exception reaches the application.
     * {@link Thread#interrupt} wakes the thread before it runs the channel's interruptor (which records the
     * interrupt, then closes); returning at once raced it, and on JDK 25 a blocking read now and then
     * returned 0 with the channel open and no exception. The JDK's channels likewise wait until closed.
     * Bounded: within begin/end every interrupt closes the channel (or finds it closed already), and the
     * close does not wait for this thread's lock before it sets {@link #connectionClosed}. (On JDK 17 and
     * 25 {@code end} cannot return before the interrupt's close has anyway: the interruptor runs under the
     * thread's interrupt lock, which {@code end} takes; this wait does not rely on it.) The channel's
     * hook is installed once more first ({@code begin()}, which closes at once for an interrupted thread):
     * a wait in a JDK selector, or blocking JDK I/O on this thread, replaces the hook and removes it on
     * its way out, and an interrupt that came then would otherwise close nothing.
     */
    private void awaitInterruptClose() {
        Thread.currentThread().interrupt();
        begin();
        while (!connectionClosed) {
            Thread.onSpinWait();
        }
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        closing = true; // after AbstractInterruptibleChannel recorded an interrupting thread
        SocketRegistry.remove(socketId);
        SdpConnection c;
        SocketChannel t;
        Object linger;
        stateLock.lock();
        try {
            c = sdp;
            t = tcp;
            linger = options.get(StandardSocketOptions.SO_LINGER);
            if (c == null && t != null && t.isConnected()) {
                ProviderEvents.tcpClosed(t, tcpBytesSent, tcpBytesReceived);
            }
        } finally {
            stateLock.unlock();
        }
        if (c != null) {
            if (handedOver.get() != 0) {
                // non-blocking (configureBlocking(true) is refused meanwhile), so no writer waits holding the lock
                writeLock.lock();
                try {
                    settleHandOversLocked(c); // what the peer has succeeds
                    c.close(); // resets the connection when advertisements are out
                    failHandOversLocked(new AsynchronousCloseException()); // done on this thread, below
                } finally {
                    writeLock.unlock();
                }
            } else {
                c.close(); // wakes a parked reader or writer; linger 0 or unread data make it abortive
            }
        }
        connectionClosed = true; // an interrupted reader or writer may leave now
        if (c != null) {
            if (isBlocking() && linger instanceof Integer seconds && seconds > 0) {
                // SO_LINGER > 0 in blocking mode: close returns when the written data reached the peer,
                // or after the linger time (the close then goes on in the background)
                try {
                    c.awaitOutputDone(TimeUnit.SECONDS.toNanos(seconds));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        leakGuard.close(); // closed by the application: not a leak
        if (t != null) {
            t.close();
        }
        if (c != null && !isBlocking()) {
            // after c.close(): a transfer the peer could still read reset the connection (queue pair gone).
            // Taken whatever handedOver said: a writeZeroCopy that passed its open check hands over under
            // the write lock, and one that comes later sees closing. Never in blocking mode (issue 29): a
            // blocked writer holds the write lock until its end(), which waits for this close, and there
            // are no hand-overs in blocking mode (writeZeroCopy refuses it, configureBlocking(true) too).
            writeLock.lock();
            try {
                failHandOversLocked(new AsynchronousCloseException());
            } finally {
                writeLock.unlock();
            }
            deliverCompletions();
        }
    }

    /**
     * As the JDK's: takes the read and the write lock, so the mode never changes under a read or write —
     * a blocking read that advertised its buffer (SinkAvail) keeps it until it returns or withdraws it,
     * and {@link #writeZeroCopy}, which checks the mode under the write lock, never races a switch to
     * blocking mode. A change waits for a blocked read or write to return, as with the JDK.
     */
    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        readLock.lock();
        try {
            writeLock.lock();
            try {
                if (block && handedOver.get() != 0) {
                    throw new IllegalBlockingModeException(); // buffers handed over by writeZeroCopy are not finished
                }
                stateLock.lock();
                try {
                    if (tcp != null) {
                        tcp.configureBlocking(block);
                    }
                } finally {
                    stateLock.unlock();
                }
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    // ------------------------------------------------------------------ statistics and diagnostics

    /** Counts bytes read over TCP (here or by {@link SdpSocketImpl}); returns {@code n}. */
    int countTcpReceived(int n) {
        if (n > 0) {
            tcpBytesReceived += n; // single writer: the reader holds a read lock
            SocketRegistry.onTcpReceived(n);
        }
        return n;
    }

    private long countTcpReceived(long n) {
        if (n > 0) {
            tcpBytesReceived += n;
            SocketRegistry.onTcpReceived(n);
        }
        return n;
    }

    /** Counts bytes written over TCP (here or by {@link SdpSocketImpl}); returns {@code n}. */
    long countTcpSent(long n) {
        if (n > 0) {
            tcpBytesSent += n; // single writer: the writer holds a write lock
            SocketRegistry.onTcpSent(n);
        }
        return n;
    }

    /** The reason inside {@code "tcp (reason)"}, or null. */
    private static String tcpReason(String transport) {
        if (transport == null || !transport.startsWith("tcp (") || !transport.endsWith(")")) {
            return null;
        }
        return transport.substring(5, transport.length() - 1);
    }

    /** What {@code jsdp.jar stat} lists; null while there is no connection or connect to show. */
    io.jsdp.SdpSocketInfo describe(long id) {
        SdpConnection c;
        SocketChannel t;
        String tr;
        boolean pending;
        stateLock.lock();
        try {
            c = sdp;
            t = tcp;
            tr = transport;
            pending = connectPending;
        } finally {
            stateLock.unlock();
        }
        if (c != null) {
            SdpConnection.ConnectionStats st = c.stats();
            String failure = c.failureDetail();
            SdpStack stack = SdpRuntime.stackIfOpen();
            return new io.jsdp.SdpSocketInfo(id, "stream", "sdp", "", "", SocketRegistry.endpoint(c.localAddress()),
                SocketRegistry.endpoint(c.remoteAddress()), st.state().name(), c.flowControl(), st.credits(), st.bytesSent(),
                st.bytesReceived(), st.messagesSent(), st.messagesReceived(), st.creditStalls(), st.zeroCopyTransfers(),
                st.rnrRetries(), c.id(), failure == null ? "" : failure, stack == null ? "" : stack.rdmaDevice().name());
        }
        if (t == null || !(pending || t.isConnected())) {
            return null;
        }
        String reason = tcpReason(tr);
        Socket s = t.socket();
        InetSocketAddress local = (InetSocketAddress) s.getLocalSocketAddress();
        InetSocketAddress peer = (InetSocketAddress) s.getRemoteSocketAddress();
        return new io.jsdp.SdpSocketInfo(id, "stream", "tcp", reason == null ? "" : Fallback.of(reason).key(),
            reason == null ? "" : reason, SocketRegistry.endpoint(local), SocketRegistry.endpoint(peer != null ? peer : remote),
            t.isConnected() ? "ESTABLISHED" : "CONNECTING", "", -1, tcpBytesSent, tcpBytesReceived, -1, -1, -1, -1, -1, -1, "", "");
    }

    @Override
    public String toString() {
        return "SdpSocketChannel[" + (isOpen() ? "" : "closed ") + "remote=" + remote + ", " + transport + "]";
    }
}
