package io.jsdp.testbed.shm;

import io.jsdp.ras.TraceLevel;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * This process's presence on the shared-memory fabric of one rendezvous directory: its
 * {@link NodeId}, its control socket {@code node-<token>.sock} (Unix domain), and one daemon thread
 * that runs a {@link Selector} over that socket and the connections to peer nodes.
 *
 * <p>The control connections carry only {@link ShmFrame}s: a HELLO naming the connecting node, then
 * DOORBELLs, which wake a waiter parked on a {@link WaitWord}, and MESSAGEs: small control payloads
 * (at most {@value #MAX_MESSAGE_BYTES} bytes, such as the connection manager's) handed to the
 * {@link MessageHandler} registered for their kind. Data never crosses them; it moves through
 * {@link SharedSegment}s. Peers connect to each other lazily, on the first doorbell or message (or
 * {@link #connect}); one connection serves both directions. What one node sends another arrives in
 * the order sent: a node sends to a peer over one connection for as long as that connection lives
 * (the first one known, whichever side made it). A connection's end-of-stream means the
 * peer process died (the kernel closes a killed process's sockets at once) or closed its node: the
 * node tells its {@link PeerListener}s. A sweep every {@link ShmSettings#peerCheckMs()} checks that
 * connected peers still live and reclaims dead processes' files ({@link Rendezvous#reclaimDead()}).
 *
 * <p>One node per process per directory: the socket is named by the process. {@link #close()} closes
 * the connections, deletes the socket file and the segments this node created, and is idempotent.
 *
 * <p>Threads: the node thread owns the selector, the keys and the read buffers, and runs the
 * message handlers. Any thread may ring a doorbell, send a message or connect; a connection's sends
 * are serialised by its {@code sendLock} (a {@link ReentrantLock}, so a virtual thread never pins a
 * carrier), and channel registrations, write-interest changes and messages to this node itself are
 * handed to the node thread through queues.
 */
public final class ShmNode implements AutoCloseable {
    /** Status of {@link #ringDoorbell}: delivered to the kernel (or, for this node, to the waiter). */
    static final int RUNG = 0;
    /**
     * Status of {@link #sendMessage}: handed to the kernel (or queued for this node's own thread); the
     * peer's handler runs later unless the peer dies first.
     */
    public static final int SENT = 0;
    /**
     * Status of {@link #ringDoorbell} and {@link #sendMessage}: the peer has no live node (its waiter
     * cannot be waiting; nobody will handle the message).
     */
    public static final int PEER_GONE = -1;
    /** Status of {@link #ringDoorbell} and {@link #sendMessage}: this node is closed. */
    public static final int NODE_CLOSED = -2;
    /** Largest payload of a message, bytes. */
    public static final int MAX_MESSAGE_BYTES = 4096;
    /** Message kinds are 0 to this, exclusive. */
    public static final int MESSAGE_KINDS = 256;

    /** Bound on frames queued to a peer that does not read; past it the peer is broken. */
    private static final int MAX_PENDING_BYTES = 1 << 20;
    /** A connection's read buffer: room for a whole message however the reads split it. */
    private static final int IN_BUFFER_BYTES = 2 * (ShmFrame.LENGTH + MAX_MESSAGE_BYTES);
    private static final long CLOSE_JOIN_MS = 5_000;
    /** Property: how long an accepted control connection may stay silent before its HELLO (or DIRECT), ms. */
    public static final String HELLO_TIMEOUT_MS_PROP = "jsdp.soft.helloTimeoutMs";
    /** Default: 2 s. A jsdp node says HELLO (or DIRECT) in the same breath as it connects. */
    public static final long HELLO_TIMEOUT_MS_DEFAULT = 2_000;
    /**
     * Accepted connections that have not said who they are, at most; while there are this many, the node
     * accepts no more (they wait in the socket's backlog). Each holds a descriptor and a read buffer, so a
     * local process that opens connections and says nothing cannot exhaust this process's descriptors or
     * heap, and a burst of genuine connects only waits for the node to read what came first.
     */
    static final int MAX_UNIDENTIFIED = 64;
    private static final ConcurrentHashMap<Path, ShmNode> OPEN = new ConcurrentHashMap<>();
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final Rendezvous rendezvous;
    private final ShmSettings settings;
    private final long helloTimeoutNs;
    private final NodeId id;
    private final Path socketPath;
    private final ServerSocketChannel server;
    /** Holds this process's life lock on the directory ({@link Rendezvous#holdLife}) while the node is open. */
    private final FileChannel lifeLock;
    private final Selector selector;
    private final Thread thread;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CopyOnWriteArrayList<PeerListener> listeners = new CopyOnWriteArrayList<>();
    /** The connection used to send to each peer; written by connecting threads and the node thread. */
    private final ConcurrentHashMap<NodeId, Connection> peers = new ConcurrentHashMap<>();
    /** Connections made by other threads, waiting for the node thread to register them. */
    private final ConcurrentLinkedQueue<Connection> toRegister = new ConcurrentLinkedQueue<>();
    /** Connections with frames left over from a full socket, waiting for write interest. */
    private final ConcurrentLinkedQueue<Connection> toFlush = new ConcurrentLinkedQueue<>();
    /** Serialises connects, so two threads ringing one new peer make one connection. */
    private final ReentrantLock connectLock = new ReentrantLock();
    private final List<SharedSegment> ownSegments = new CopyOnWriteArrayList<>();
    private final AtomicLong segmentNumbers = new AtomicLong();

    // Doorbell registry: ids index the array; grown copy-on-write under registryLock, read lock-free
    // by the node thread.
    private final ReentrantLock registryLock = new ReentrantLock();
    private volatile Doorbell[] doorbells = new Doorbell[8];
    private int nextDoorbell; // guarded by registryLock

    private final AtomicLong doorbellsRung = new AtomicLong();
    private final AtomicLong doorbellsDelivered = new AtomicLong();

    /** Handlers by message kind; set by any thread, read by the node thread. */
    private final AtomicReferenceArray<MessageHandler> handlers = new AtomicReferenceArray<>(MESSAGE_KINDS);
    /** Messages this node sent itself, for the node thread to hand to their handlers (never the sender). */
    private final ConcurrentLinkedQueue<LocalMessage> localMessages = new ConcurrentLinkedQueue<>();
    private final AtomicLong messagesSent = new AtomicLong();
    private final AtomicLong messagesDelivered = new AtomicLong();

    // Node thread only.
    private final List<Connection> connections = new ArrayList<>();
    private long nextSweepNs;
    /** {@link #hookExit}'s hook, removed when the node closes. */
    private volatile Thread exitHook;

    private ShmNode(Rendezvous rendezvous, ShmSettings settings) throws IOException {
        this.rendezvous = rendezvous;
        this.settings = settings;
        long helloMs = ShmSettings.longProperty(HELLO_TIMEOUT_MS_PROP, HELLO_TIMEOUT_MS_DEFAULT);
        if (helloMs < 1 || helloMs > 600_000) {
            throw new IllegalArgumentException(HELLO_TIMEOUT_MS_PROP + " must be 1 ... 600000, is " + helloMs);
        }
        this.helloTimeoutNs = TimeUnit.MILLISECONDS.toNanos(helloMs);
        this.id = NodeId.current();
        this.socketPath = rendezvous.nodeSocket(id);
        if (id.pid() > Integer.MAX_VALUE) {
            throw new IOException("pid " + id.pid() + " does not fit the HELLO frame");
        }
        rendezvous.reclaimDead(); // what crashed processes left behind
        if (Files.exists(socketPath)) {
            // Our token names it, so no other live process owns it: a leftover of this very process
            // (a node of another class loader, or a pid and start stamp repeated across a reboot).
            throw new IOException("control socket " + socketPath + " already exists; another node of this process is open"
                + " there, or it is left from before a reboot: delete it");
        }
        // alive for everyone before anything of ours appears: files whose owner holds no life lock are
        // judged by /proc, which a process in another PID namespace cannot use
        FileChannel lifeLock = rendezvous.holdLife(id);
        ServerSocketChannel ssc = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        Selector sel = null;
        try {
            ssc.bind(UnixDomainSocketAddress.of(socketPath));
            Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-------"));
            ssc.configureBlocking(false);
            sel = Selector.open();
            ssc.register(sel, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            ssc.close();
            if (sel != null) {
                sel.close();
            }
            Files.deleteIfExists(socketPath);
            rendezvous.dropLife(id, lifeLock);
            throw e;
        }
        this.lifeLock = lifeLock;
        this.server = ssc;
        this.selector = sel;
        this.thread = new Thread(this::run, "jsdp-shm-node-" + id.token());
        this.thread.setDaemon(true);
    }

    /**
     * Opens this process's node on {@code rendezvous}: binds its control socket, reclaims files of
     * dead processes, and starts its thread.
     *
     * @param rendezvous the directory
     * @param settings the tunables ({@link ShmSettings#fromSystemProperties()} for the configured ones)
     * @return the node
     * @throws IOException when the socket cannot be bound
     * @throws IllegalStateException when this process already has a node open on the directory
     */
    public static ShmNode open(Rendezvous rendezvous, ShmSettings settings) throws IOException {
        Path key = rendezvous.directory();
        ShmNode[] made = new ShmNode[1];
        IOException[] failed = new IOException[1];
        ShmNode winner = OPEN.computeIfAbsent(key, k -> {
            try {
                made[0] = new ShmNode(rendezvous, settings);
                return made[0];
            } catch (IOException e) {
                failed[0] = e;
                return null;
            }
        });
        if (failed[0] != null) {
            throw failed[0];
        }
        if (winner != made[0]) {
            throw new IllegalStateException("this process already has a node open on " + key + ": " + winner);
        }
        winner.nextSweepNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.peerCheckMs());
        winner.thread.start();
        winner.hookExit();
        Rendezvous.TRACE.message(TraceLevel.RARE, "shm.nodeOpen", "node " + winner.id.token() + " open on " + key);
        return winner;
    }

    /**
     * This process's id.
     *
     * @return the id
     */
    public NodeId id() {
        return id;
    }

    /**
     * The directory the node is on.
     *
     * @return the rendezvous
     */
    public Rendezvous rendezvous() {
        return rendezvous;
    }

    /**
     * The tunables the node was opened with.
     *
     * @return the settings
     */
    public ShmSettings settings() {
        return settings;
    }

    /**
     * Whether {@link #close()} has not been called.
     *
     * @return true while open
     */
    public boolean isOpen() {
        return !closed.get();
    }

    /**
     * Creates a zero-filled segment {@code seg-<token>-<n>} owned by this process; closing the node
     * deletes its file.
     *
     * @param bytes the size
     * @return the segment
     * @throws IOException when it cannot be created
     */
    public SharedSegment createSegment(int bytes) throws IOException {
        ensureOpen();
        SharedSegment s = SharedSegment.create(rendezvous, rendezvous.segment(id, segmentNumbers.incrementAndGet()), bytes,
            settings.sparseReserveBytes());
        ownSegments.add(s);
        return s;
    }

    /**
     * Deletes the file of a segment this node created and forgets it; the mappings stay valid.
     *
     * @param segment a segment {@link #createSegment} returned
     */
    public void deleteSegment(SharedSegment segment) {
        if (ownSegments.remove(segment)) {
            segment.delete();
        }
    }

    /**
     * The name segment {@code number} of node {@code owner} has (its {@link SharedSegment#name()}).
     *
     * @param owner the creating node
     * @param number the number in its name
     * @return the file name
     */
    public String segmentName(NodeId owner, long number) {
        return rendezvous.segment(owner, number).getFileName().toString();
    }

    /**
     * Maps a segment of this directory by name (as {@link SharedSegment#name()} gives it).
     *
     * @param name the file name
     * @return the segment
     * @throws IOException when there is no such segment
     */
    public SharedSegment openSegment(String name) throws IOException {
        ensureOpen();
        Path p = rendezvous.directory().resolve(name);
        if (!p.getParent().equals(rendezvous.directory()) || !name.startsWith("seg-")) {
            throw new IOException("not a segment name: " + name);
        }
        return SharedSegment.open(p);
    }

    /**
     * Registers a listener for lost peers.
     *
     * @param l the listener
     */
    public void addPeerListener(PeerListener l) {
        listeners.add(l);
    }

    /**
     * Removes a listener.
     *
     * @param l the listener
     */
    public void removePeerListener(PeerListener l) {
        listeners.remove(l);
    }

    /**
     * The peers this node has a control connection with (that it connected to, or that said HELLO).
     *
     * @return a snapshot
     */
    public Set<NodeId> peers() {
        return Set.copyOf(peers.keySet());
    }

    /**
     * Makes sure there is a control connection to {@code peer}, so its loss will be reported.
     *
     * @param peer the peer
     * @return true when connected, false when the peer has no live node on this directory
     * @throws IOException when this node is closed
     */
    public boolean connect(NodeId peer) throws IOException {
        ensureOpen();
        return peer.equals(id) || connection(peer) != null;
    }

    /**
     * Doorbells this node's wakers rang (to peers or to this node's own waiters).
     *
     * @return the count
     */
    public long doorbellsRung() {
        return doorbellsRung.get();
    }

    /**
     * Doorbells this node handed to its waiters (from peers or from itself).
     *
     * @return the count
     */
    public long doorbellsDelivered() {
        return doorbellsDelivered.get();
    }

    // ------------------------------------------------------------------------------------------
    // Doorbells

    /**
     * A waiter slot: the id travels in DOORBELL frames; the node thread runs the waiter's
     * {@link #onNodeThread} action, if any, and unparks {@link #waiter}.
     */
    static final class Doorbell {
        final int id;
        /** The thread parked (or about to park) on this doorbell; written by it, read by the ringer. */
        volatile Thread waiter;
        /**
         * What the node thread runs for a DOORBELL frame from a peer (null: nothing), in place of the
         * waiter or before it: the waiter's work then starts on the thread that took the doorbell from
         * the kernel (issue 27). It is given the ringer's hint ({@link WaitWord#wake(int)}) and answers
         * whether it did the waiter's whole part, re-arming the word included ({@link WaitWord#rearm});
         * only when it did not is {@link #waiter} unparked. Set once, before the word is armed. Rings
         * from this process do not run it: their ringer may hold locks the action needs.
         */
        volatile java.util.function.IntPredicate onNodeThread;

        Doorbell(int id) {
            this.id = id;
        }

        void ring() {
            Thread t = waiter;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    Doorbell newDoorbell() {
        registryLock.lock();
        try {
            ensureOpenUnchecked();
            Doorbell[] table = doorbells;
            int n = nextDoorbell++;
            if (n == table.length) {
                table = Arrays.copyOf(table, n * 2);
            } else {
                table = table.clone();
            }
            Doorbell d = new Doorbell(n);
            table[n] = d;
            doorbells = table;
            return d;
        } finally {
            registryLock.unlock();
        }
    }

    void freeDoorbell(Doorbell d) {
        registryLock.lock();
        try {
            Doorbell[] table = doorbells.clone();
            if (d.id < table.length && table[d.id] == d) {
                table[d.id] = null;
                doorbells = table;
            }
        } finally {
            registryLock.unlock();
        }
    }

    /**
     * Unparks the waiter of doorbell {@code id}, unless its {@link Doorbell#onNodeThread} action, run
     * for a frame the node thread took ({@code fromPeer}), did the waiter's part; an unknown id is a
     * stale doorbell and ignored.
     */
    private void deliver(long doorbellId, boolean fromPeer, int hint) {
        Doorbell[] table = doorbells;
        if (doorbellId >= 0 && doorbellId < table.length) {
            Doorbell d = table[(int) doorbellId];
            if (d != null) {
                doorbellsDelivered.incrementAndGet();
                java.util.function.IntPredicate inline = fromPeer ? d.onNodeThread : null;
                boolean done = false;
                if (inline != null) {
                    try {
                        done = inline.test(hint);
                    } catch (RuntimeException | InternalError e) {
                        Rendezvous.TRACE.record(TraceLevel.ERROR, "shm.doorbellActionFailed", e);
                    }
                }
                if (!done) {
                    d.ring();
                }
                return;
            }
        }
        Rendezvous.TRACE.record(TraceLevel.INTERNALS, "shm.staleDoorbell", doorbellId);
    }

    /**
     * Rings doorbell {@code doorbellId} of node {@code target}: a DOORBELL frame to the peer (a
     * kernel crossing), or a direct unpark when the target is this node.
     *
     * @param hint the ringer's hint for the waiter's node-thread action ({@link WaitWord#wake(int)}),
     *     carried in the frame's aux field
     * @return {@link #RUNG}, {@link #PEER_GONE} or {@link #NODE_CLOSED}
     */
    int ringDoorbell(NodeId target, long doorbellId, int hint) {
        if (closed.get()) {
            return NODE_CLOSED;
        }
        doorbellsRung.incrementAndGet();
        if (target.equals(id)) {
            deliver(doorbellId, false, hint);
            return RUNG;
        }
        Connection c = peers.get(target);
        if (c == null) {
            try {
                c = connection(target);
            } catch (IOException closedNode) {
                return NODE_CLOSED;
            }
            if (c == null) {
                return PEER_GONE;
            }
        }
        return c.send(ShmFrame.DOORBELL, hint, doorbellId) ? RUNG : PEER_GONE;
    }

    // ------------------------------------------------------------------------------------------
    // Messages

    /** Takes the direct-doorbell connections peers open to this node ({@link #openDirect}). */
    public interface DirectHandler {
        /**
         * A peer opened a direct doorbell to one of our queue pairs; runs on the node thread.
         *
         * @param peer the node the connecting process named (checked against the queue pair's link)
         * @param targetQp our queue pair
         * @param sourceQp the peer's
         * @param channel the connection, non-blocking, no longer read by the node thread
         * @return true when taken; false closes it
         */
        boolean onDirect(NodeId peer, int targetQp, int sourceQp, SocketChannel channel);
    }

    private volatile DirectHandler directHandler;

    /**
     * Sets who takes the direct doorbells peers open to this node.
     *
     * @param h the handler, or null to refuse them
     */
    public void setDirectHandler(DirectHandler h) {
        this.directHandler = h;
    }

    /**
     * Opens a direct doorbell to queue pair {@code targetQp} of node {@code target}: a Unix-domain
     * connection to its node socket, whose first frame hands it to the peer's {@link DirectHandler}.
     *
     * @param target the peer's node
     * @param targetQp the peer's queue pair
     * @param sourceQp ours
     * @return the connection, non-blocking; null when the peer's node cannot be reached
     */
    public SocketChannel openDirect(NodeId target, int targetQp, int sourceQp) {
        if (!isOpen()) {
            return null;
        }
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(rendezvous.nodeSocket(target)));
            ByteBuffer b = ByteBuffer.allocate(ShmFrame.LENGTH + ShmFrame.DIRECT_BODY);
            ShmFrame.put(b, ShmFrame.DIRECT, (int) id.pid(), id.start());
            b.putInt(targetQp).putInt(sourceQp).flip();
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.configureBlocking(false);
            return ch;
        } catch (IOException | RuntimeException e) {
            Rendezvous.TRACE.record(TraceLevel.INTERNALS, "shm.directFailed", target.pid());
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // nothing more to undo
                }
            }
            return null;
        }
    }

    /** Handles the messages of one kind; see {@link #setMessageHandler}. */
    @FunctionalInterface
    public interface MessageHandler {
        /**
         * A message arrived. Called on the node thread, in the order the sender sent its messages:
         * return quickly and never block (the node thread also delivers doorbells and notices lost
         * peers). An exception is traced and the message dropped.
         *
         * @param from the sending node (this node for a message it sent itself)
         * @param payload the payload, read-only, position 0; valid only during the call
         */
        void onMessage(NodeId from, ByteBuffer payload);
    }

    /** A message to this node itself: kind and a copy of the payload. */
    private record LocalMessage(int kind, ByteBuffer payload) {
    }

    /**
     * Sets the handler of message kind {@code kind}, replacing any; null removes it (later messages
     * of the kind are dropped, and traced).
     *
     * @param kind 0 to {@link #MESSAGE_KINDS}, exclusive
     * @param handler the handler, or null
     */
    public void setMessageHandler(int kind, MessageHandler handler) {
        checkKind(kind);
        handlers.set(kind, handler);
    }

    /**
     * Sends a message to node {@code target}'s handler of {@code kind}: the bytes between
     * {@code payload}'s position and limit (the buffer itself is not changed). Never waits for the
     * peer: what the socket cannot take now is queued and written by the node thread. A message to
     * this node itself is queued for the node thread too, so the handler never runs inside the
     * caller, who may hold locks the handler takes.
     *
     * @param target the receiving node, possibly this one
     * @param kind the message kind, 0 to {@link #MESSAGE_KINDS}, exclusive
     * @param payload at most {@link #MAX_MESSAGE_BYTES} bytes
     * @return {@link #SENT}, {@link #PEER_GONE} or {@link #NODE_CLOSED}
     * @throws IllegalArgumentException when the kind or the payload size is out of range
     */
    public int sendMessage(NodeId target, int kind, ByteBuffer payload) {
        checkKind(kind);
        int n = payload.remaining();
        if (n > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("message of " + n + " bytes; at most " + MAX_MESSAGE_BYTES);
        }
        if (closed.get()) {
            return NODE_CLOSED;
        }
        if (target.equals(id)) {
            ByteBuffer copy = ByteBuffer.allocate(n).put(payload.duplicate()).flip();
            localMessages.add(new LocalMessage(kind, copy.asReadOnlyBuffer()));
            messagesSent.incrementAndGet();
            selector.wakeup();
            return SENT;
        }
        Connection c = peers.get(target);
        if (c == null) {
            try {
                c = connection(target);
            } catch (IOException closedNode) {
                return NODE_CLOSED;
            }
            if (c == null) {
                return PEER_GONE;
            }
        }
        if (!c.sendMessage(kind, payload.duplicate())) {
            return PEER_GONE;
        }
        messagesSent.incrementAndGet();
        return SENT;
    }

    /**
     * Messages this node sent (to peers or to itself) that were handed on.
     *
     * @return the count
     */
    public long messagesSent() {
        return messagesSent.get();
    }

    /**
     * Messages this node handed to its handlers (from peers or from itself).
     *
     * @return the count
     */
    public long messagesDelivered() {
        return messagesDelivered.get();
    }

    private static void checkKind(int kind) {
        if (kind < 0 || kind >= MESSAGE_KINDS) {
            throw new IllegalArgumentException("message kind " + kind + " outside 0.." + (MESSAGE_KINDS - 1));
        }
    }

    /** Node thread: hands one message to its handler. */
    private void dispatch(NodeId from, int kind, ByteBuffer payload) {
        MessageHandler h = handlers.get(kind);
        if (h == null) {
            Rendezvous.TRACE.record(TraceLevel.RARE, "shm.messageUnhandled", kind, from.pid());
            return;
        }
        messagesDelivered.incrementAndGet();
        try {
            h.onMessage(from, payload);
        } catch (RuntimeException e) {
            Rendezvous.TRACE.record(TraceLevel.ERROR, "shm.messageHandlerFailed", e);
        }
    }

    /** Node thread: the messages this node sent itself, in the order sent. */
    private void deliverLocal() {
        LocalMessage m;
        while ((m = localMessages.poll()) != null) {
            dispatch(id, m.kind(), m.payload());
        }
    }

    // ------------------------------------------------------------------------------------------
    // Connections

    /** A control connection to a peer node. */
    private final class Connection {
        final SocketChannel channel;
        /** Known at connect for outgoing connections, from HELLO for accepted ones (node thread). */
        volatile NodeId peer;
        final ReentrantLock sendLock = new ReentrantLock();
        // guarded by sendLock
        private final ByteBuffer frame = ByteBuffer.allocate(ShmFrame.LENGTH);
        private final ByteBuffer[] gather = new ByteBuffer[2];
        private ByteBuffer pending = ByteBuffer.allocate(ShmFrame.LENGTH * 16);
        private boolean broken;
        // node thread only
        final ByteBuffer in = ByteBuffer.allocate(IN_BUFFER_BYTES);
        SelectionKey key;
        /** When an accepted connection was accepted; 0 for one this node opened (node thread). */
        long acceptedNs;

        Connection(SocketChannel channel, NodeId peer) {
            this.channel = channel;
            this.peer = peer;
        }

        /**
         * Queues one frame, writing it now if the socket has room. Never blocks on the peer: a full
         * socket leaves the rest for the node thread. False when the connection is broken.
         */
        boolean send(int type, int aux, long arg) {
            sendLock.lock();
            try {
                frame.clear();
                ShmFrame.put(frame, type, aux, arg);
                return write(frame.flip(), EMPTY);
            } finally {
                sendLock.unlock();
            }
        }

        /** Queues one MESSAGE frame and its payload, as {@link #send}. */
        boolean sendMessage(int kind, ByteBuffer payload) {
            sendLock.lock();
            try {
                frame.clear();
                ShmFrame.put(frame, ShmFrame.MESSAGE, kind, payload.remaining());
                return write(frame.flip(), payload);
            } finally {
                sendLock.unlock();
            }
        }

        /** Holds sendLock: writes {@code head} then {@code body}, queueing what the socket does not take. */
        private boolean write(ByteBuffer head, ByteBuffer body) {
            if (broken) {
                return false;
            }
            if (pending.position() > 0) {
                return queue(head, body); // keep order behind frames already waiting
            }
            try {
                gather[0] = head;
                gather[1] = body;
                channel.write(gather);
            } catch (IOException e) {
                broken = true; // the node thread sees the same failure as end-of-stream and reports it
                selector.wakeup();
                return false;
            } finally {
                gather[0] = null;
                gather[1] = null;
            }
            if (head.hasRemaining() || body.hasRemaining()) {
                if (!queue(head, body)) {
                    return false;
                }
                toFlush.add(this);
                selector.wakeup();
            }
            return true;
        }

        private boolean queue(ByteBuffer head, ByteBuffer body) {
            int need = head.remaining() + body.remaining();
            if (pending.remaining() < need) {
                int capacity = pending.capacity();
                while (capacity - pending.position() < need) {
                    capacity *= 2;
                }
                if (capacity > MAX_PENDING_BYTES) {
                    broken = true;
                    Rendezvous.TRACE.message(TraceLevel.ERROR, "shm.peerNotReading", "peer " + peer
                        + " has not read " + pending.position() + " bytes of control frames; dropping the connection");
                    selector.wakeup();
                    return false;
                }
                pending = ByteBuffer.allocate(capacity).put(pending.flip());
            }
            pending.put(head).put(body);
            return true;
        }

        /** Node thread: writes what is pending; true when all is written. */
        boolean flush() throws IOException {
            sendLock.lock();
            try {
                pending.flip();
                try {
                    channel.write(pending);
                } finally {
                    pending.compact();
                }
                return pending.position() == 0;
            } finally {
                sendLock.unlock();
            }
        }

        boolean isBroken() {
            sendLock.lock();
            try {
                return broken;
            } finally {
                sendLock.unlock();
            }
        }

        void close() {
            sendLock.lock();
            try {
                broken = true;
            } finally {
                sendLock.unlock();
            }
            try {
                channel.close();
            } catch (IOException e) {
                Rendezvous.TRACE.record(TraceLevel.INTERNALS, "shm.closeFailed", e);
            }
        }
    }

    /** The connection to {@code target}, connecting if there is none; null when it has no live node. */
    private Connection connection(NodeId target) throws IOException {
        Connection c = peers.get(target);
        if (c != null) {
            return c;
        }
        connectLock.lock();
        try {
            ensureOpen();
            c = peers.get(target);
            if (c != null) {
                return c;
            }
            SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                // Blocking connect: a Unix-domain connect completes at once or is refused; the peer's
                // node thread accepts promptly, so the backlog does not fill.
                ch.connect(UnixDomainSocketAddress.of(rendezvous.nodeSocket(target)));
                ch.configureBlocking(false);
            } catch (IOException refusedOrMissing) {
                ch.close();
                Rendezvous.TRACE.record(TraceLevel.INTERNALS, "shm.connectFailed", target.pid());
                return null;
            }
            c = new Connection(ch, target);
            if (!c.send(ShmFrame.HELLO, (int) id.pid(), id.start())) {
                c.close();
                return null;
            }
            // The peer's own connection may have said HELLO meanwhile and be in use: keep sending there,
            // so frames to one peer never switch connections (and order) while both live.
            Connection first = peers.putIfAbsent(target, c);
            toRegister.add(c);
            selector.wakeup();
            return first != null ? first : c;
        } finally {
            connectLock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------
    // The node thread

    private void run() {
        long sweepPeriodNs = TimeUnit.MILLISECONDS.toNanos(settings.peerCheckMs());
        try {
            while (!closed.get()) {
                registerNew();
                long waitMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextSweepNs - System.nanoTime()));
                selector.select(waitMs);
                for (SelectionKey k : selector.selectedKeys()) {
                    handle(k);
                }
                selector.selectedKeys().clear();
                deliverLocal();
                dropBroken();
                resumeAccepting();
                if (System.nanoTime() - nextSweepNs >= 0) {
                    sweep();
                    nextSweepNs = System.nanoTime() + sweepPeriodNs;
                }
            }
        } catch (IOException | RuntimeException e) {
            Rendezvous.TRACE.record(TraceLevel.ERROR, "shm.nodeThreadFailed", e);
        } finally {
            cleanUp();
        }
    }

    private void registerNew() {
        Connection c;
        while ((c = toRegister.poll()) != null) {
            try {
                c.key = c.channel.register(selector, SelectionKey.OP_READ, c);
                connections.add(c);
            } catch (ClosedChannelException e) {
                lost(c);
            }
        }
        while ((c = toFlush.poll()) != null) {
            if (c.key != null && c.key.isValid()) {
                c.key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            } else if (c.key == null) {
                toFlush.add(c); // not registered yet: registered above on a later pass
                break;
            }
        }
    }

    private void handle(SelectionKey k) {
        if (!k.isValid()) {
            return;
        }
        if (k.channel() == server) {
            accept();
            return;
        }
        Connection c = (Connection) k.attachment();
        try {
            if (!k.isValid()) {
                return;
            }
            if (k.isWritable() && c.flush()) {
                k.interestOps(SelectionKey.OP_READ);
            }
            if (k.isReadable()) {
                read(c);
            }
        } catch (IOException | CancelledKeyException e) {
            lost(c); // ECONNRESET and the like: the peer is gone as surely as on end-of-stream
        }
    }

    private void accept() {
        try {
            SocketChannel ch;
            for (;;) {
                if (unidentified() >= MAX_UNIDENTIFIED) {
                    Rendezvous.TRACE.record(TraceLevel.RARE, "shm.acceptPaused", MAX_UNIDENTIFIED);
                    server.keyFor(selector).interestOps(0); // until some say who they are or time out
                    return;
                }
                if ((ch = server.accept()) == null) {
                    return;
                }
                ch.configureBlocking(false);
                Connection c = new Connection(ch, null);
                c.acceptedNs = System.nanoTime();
                c.key = ch.register(selector, SelectionKey.OP_READ, c);
                connections.add(c);
            }
        } catch (IOException e) {
            Rendezvous.TRACE.record(TraceLevel.RARE, "shm.acceptFailed", e);
        }
    }

    private void read(Connection c) throws IOException {
        ByteBuffer in = c.in;
        int n = c.channel.read(in);
        if (n < 0) {
            lost(c);
            return;
        }
        in.flip();
        int at = 0;
        while (in.limit() - at >= ShmFrame.LENGTH) {
            int length = frameLength(c, in, at);
            if (length < 0) {
                lost(c);
                return;
            }
            if (in.limit() - at < length) {
                break; // the rest of a message is still coming; the buffer has room for it
            }
            if (!onFrame(c, in, at)) {
                lost(c);
                return;
            }
            if (c.key == null) {
                return; // handed over as a direct doorbell: no longer ours
            }
            at += length;
        }
        in.position(at);
        in.compact();
    }

    /** Bytes of the frame at {@code at}, header and payload, known from its header; -1 on a violation. */
    private int frameLength(Connection c, ByteBuffer in, int at) {
        if (ShmFrame.type(in, at) == ShmFrame.DIRECT) {
            return ShmFrame.LENGTH + ShmFrame.DIRECT_BODY;
        }
        if (ShmFrame.type(in, at) != ShmFrame.MESSAGE) {
            return ShmFrame.LENGTH;
        }
        if (c.peer == null) {
            violation(c, "MESSAGE before HELLO");
            return -1;
        }
        int kind = ShmFrame.aux(in, at);
        long bytes = ShmFrame.arg(in, at);
        if (kind < 0 || kind >= MESSAGE_KINDS) {
            violation(c, "MESSAGE of kind " + kind);
            return -1;
        }
        if (bytes < 0 || bytes > MAX_MESSAGE_BYTES) {
            violation(c, "MESSAGE of " + bytes + " bytes, at most " + MAX_MESSAGE_BYTES);
            return -1;
        }
        return ShmFrame.LENGTH + (int) bytes;
    }

    /** Handles one frame; false on a protocol violation. */
    private boolean onFrame(Connection c, ByteBuffer in, int at) {
        int type = ShmFrame.type(in, at);
        switch (type) {
            case ShmFrame.DOORBELL:
                if (c.peer == null) {
                    return violation(c, "DOORBELL before HELLO");
                }
                deliver(ShmFrame.arg(in, at), true, ShmFrame.aux(in, at));
                return true;
            case ShmFrame.HELLO:
                if (c.peer != null) {
                    return violation(c, "second HELLO");
                }
                NodeId p;
                try {
                    p = new NodeId(ShmFrame.aux(in, at), ShmFrame.arg(in, at));
                } catch (IllegalArgumentException bad) {
                    return violation(c, "HELLO with a bad node id");
                }
                c.peer = p;
                peers.putIfAbsent(p, c);
                return true;
            case ShmFrame.DIRECT:
                if (c.peer != null) {
                    return violation(c, "DIRECT after HELLO");
                }
                NodeId from;
                try {
                    from = new NodeId(ShmFrame.aux(in, at), ShmFrame.arg(in, at));
                } catch (IllegalArgumentException bad) {
                    return violation(c, "DIRECT with a bad node id");
                }
                if (in.limit() - at > ShmFrame.LENGTH + ShmFrame.DIRECT_BODY) {
                    return violation(c, "bytes after DIRECT before its answer");
                }
                int targetQp = in.getInt(at + ShmFrame.LENGTH);
                int sourceQp = in.getInt(at + ShmFrame.LENGTH + 4);
                // leaves the node thread: the key is cancelled, the socket stays open
                c.key.cancel();
                c.key = null;
                connections.remove(c);
                DirectHandler h = directHandler;
                if (h == null || !h.onDirect(from, targetQp, sourceQp, c.channel)) {
                    c.close();
                }
                return true;
            case ShmFrame.MESSAGE: // header checked by frameLength
                dispatch(c.peer, ShmFrame.aux(in, at),
                    in.slice(at + ShmFrame.LENGTH, (int) ShmFrame.arg(in, at)).asReadOnlyBuffer());
                return true;
            default:
                return violation(c, "unknown frame type " + type);
        }
    }

    private boolean violation(Connection c, String what) {
        Rendezvous.TRACE.message(TraceLevel.ERROR, "shm.protocolViolation", what + " from " + (c.peer == null ? "a peer before its HELLO" : c.peer)
            + "; closing that connection");
        return false;
    }

    /** Connections a sender found broken are closed here, where their keys live. */
    private void dropBroken() {
        for (int i = connections.size() - 1; i >= 0; i--) {
            Connection c = connections.get(i);
            if (c.isBroken()) {
                lost(c);
            }
        }
    }

    /**
     * Closes {@code c}; when it was the peer's last connection, the peer is gone and listeners hear
     * of it once.
     */
    private void lost(Connection c) {
        if (c.key != null) {
            c.key.cancel();
        }
        c.close();
        connections.remove(c);
        NodeId p = c.peer;
        if (p == null) {
            return; // never said HELLO: nobody to report
        }
        Connection other = null;
        for (Connection o : connections) {
            if (p.equals(o.peer)) {
                other = o;
                break;
            }
        }
        boolean wasSender = peers.remove(p, c);
        if (other != null) {
            if (wasSender) {
                peers.putIfAbsent(p, other);
            }
            return;
        }
        if (wasSender || !peers.containsKey(p)) {
            peerGone(p);
        }
    }

    private void peerGone(NodeId p) {
        Rendezvous.TRACE.message(TraceLevel.RARE, "shm.peerGone", "peer " + p.token() + " is gone");
        for (PeerListener l : listeners) {
            try {
                l.onPeerGone(p);
            } catch (RuntimeException e) {
                Rendezvous.TRACE.record(TraceLevel.ERROR, "shm.peerListenerFailed", e);
            }
        }
    }

    /** Accepted connections that have not said HELLO (or DIRECT) yet. */
    private int unidentified() {
        int n = 0;
        for (Connection c : connections) {
            if (c.peer == null && c.acceptedNs != 0) {
                n++;
            }
        }
        return n;
    }

    /** Accepts again once fewer than {@link #MAX_UNIDENTIFIED} accepted connections are silent. */
    private void resumeAccepting() {
        SelectionKey k = server.keyFor(selector);
        if (k != null && k.isValid() && k.interestOps() == 0 && unidentified() < MAX_UNIDENTIFIED) {
            k.interestOps(SelectionKey.OP_ACCEPT);
        }
    }

    /** Closes accepted connections that stayed silent past {@link #HELLO_TIMEOUT_MS_PROP}. */
    private void dropSilent() {
        long now = System.nanoTime();
        for (int i = connections.size() - 1; i >= 0; i--) {
            Connection c = connections.get(i);
            if (c.peer == null && c.acceptedNs != 0 && now - c.acceptedNs > helloTimeoutNs) {
                Rendezvous.TRACE.message(TraceLevel.RARE, "shm.helloTimeout", "a control connection said nothing for "
                    + TimeUnit.NANOSECONDS.toMillis(helloTimeoutNs) + " ms; closed");
                lost(c);
            }
        }
    }

    /** Silent control connections, peers whose process died with their socket open, then dead processes' files. */
    private void sweep() {
        dropSilent();
        for (NodeId p : List.copyOf(peers.keySet())) {
            if (!rendezvous.isAlive(p)) {
                for (int i = connections.size() - 1; i >= 0; i--) {
                    Connection c = connections.get(i);
                    if (p.equals(c.peer)) {
                        c.key.cancel();
                        c.close();
                        connections.remove(i);
                    }
                }
                Connection c = peers.remove(p);
                if (c != null) {
                    c.close();
                }
                peerGone(p);
            }
        }
        rendezvous.reclaimDead();
    }

    private void cleanUp() {
        for (Connection c : connections) {
            c.close();
        }
        connections.clear();
        connectLock.lock(); // a connect that began before close has queued its connection by now
        try {
            Connection c;
            while ((c = toRegister.poll()) != null) {
                c.close();
            }
            for (Connection p : peers.values()) {
                p.close();
            }
            peers.clear();
        } finally {
            connectLock.unlock();
        }
        try {
            selector.close();
            server.close();
            Files.deleteIfExists(socketPath);
        } catch (IOException e) {
            Rendezvous.TRACE.record(TraceLevel.RARE, "shm.closeFailed", e);
        }
        for (SharedSegment s : ownSegments) {
            s.delete();
        }
        ownSegments.clear();
        rendezvous.dropLife(id, lifeLock); // the last of our files: dead for everyone from here
        // Waiters parked here return CLOSED instead of waiting out their safety net.
        for (Doorbell d : doorbells) {
            if (d != null) {
                d.ring();
            }
        }
        OPEN.remove(rendezvous.directory(), this);
    }

    /**
     * Closes the node: its connections (peers see end-of-stream), its control socket file and the
     * files of segments it created; parked waiters return. Idempotent; waits (bounded) for the node
     * thread unless called on it.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        connectLock.lock(); // no connect half-way while the node thread tears down
        connectLock.unlock();
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(CLOSE_JOIN_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Thread hook = exitHook;
        if (hook != null && hook != Thread.currentThread()) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException exiting) {
                // closed during JVM exit: the hook finds the node closed and does nothing
            }
        }
        Rendezvous.TRACE.message(TraceLevel.RARE, "shm.nodeClosed", "node " + id.token() + " closed");
    }

    /**
     * At JVM exit, deletes this node's files ({@link Rendezvous#deleteFilesOf}) when it was not closed: a
     * process that ends without closing its devices leaves nothing behind in the rendezvous directory.
     */
    private void hookExit() {
        Thread hook = new Thread(() -> {
            if (!closed.get()) {
                int n = rendezvous.deleteFilesOf(id);
                Rendezvous.TRACE.message(TraceLevel.RARE, "shm.exitCleanup", "node " + id.token() + ": " + n
                    + " file(s) deleted at JVM exit");
            }
        }, "jsdp-shm-exit");
        try {
            Runtime.getRuntime().addShutdownHook(hook);
            exitHook = hook;
        } catch (IllegalStateException exiting) {
            // the JVM is already exiting: the next sweep of another process reclaims the files
        }
    }

    private void ensureOpen() throws IOException {
        if (closed.get()) {
            throw new IOException("shared-memory node " + id.token() + " is closed");
        }
    }

    private void ensureOpenUnchecked() {
        if (closed.get()) {
            throw new IllegalStateException("shared-memory node " + id.token() + " is closed");
        }
    }

    @Override
    public String toString() {
        return "ShmNode[" + id.token() + " on " + rendezvous.directory() + (closed.get() ? ", closed" : "") + "]";
    }
}
