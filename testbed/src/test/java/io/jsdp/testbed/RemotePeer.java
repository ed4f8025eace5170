package io.jsdp.testbed;

import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.testbed.RemoteProtocol.Out;
import io.jsdp.verbs.DeviceCapabilities;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * A forked peer JVM running {@link RemotePeerMain}, and the test JVM's end of the connection to it:
 * {@link #openDevice()} opens a SoftRdma device there and returns a {@link RemoteDevice} whose objects
 * forward every call (wire: {@link RemoteProtocol}). One peer serves any number of devices, so a test
 * class forks one and closes it at the end; {@link #close()} ends and reaps the process.
 *
 * <p>Threads: callers send their request under {@link #writeLock} and wait for the reply; one reader
 * thread hands replies to the waiting callers by call id. When the peer goes away every waiting and
 * later call fails with a {@link PeerGoneException} naming the cause and the peer's last output.
 */
final class RemotePeer implements AutoCloseable {
    private static final long START_TIMEOUT_MS = 30_000;
    /** Longest wait for the answer to a call that does not wait in the peer: a bound on a hung peer. */
    private static final long ANSWER_TIMEOUT_MS = 60_000;
    private static final int TRANSCRIPT_LINES = 200;

    private final Process process;
    private final Deque<String> transcript;
    private final Socket socket;
    /** Guards writes to {@link #out}: one frame at a time. */
    private final Object writeLock = new Object();
    private final OutputStream out;
    private final DataInputStream in;
    private final AtomicInteger callIds = new AtomicInteger();
    /** Calls waiting for their reply, by call id; the reader removes and completes them. */
    private final Map<Integer, CompletableFuture<ByteBuffer>> pending = new ConcurrentHashMap<>();
    /** Why the peer is gone: set by the reader at the end of the stream, or by close; read by callers. */
    private volatile Throwable gone;
    /** The proxy of every object that crossed the wire, by handle, so a handle always gives the same proxy. */
    private final Map<Integer, Proxy> proxies = new ConcurrentHashMap<>();
    /** Device memory by the buffer of its mapping here, for {@link RemoteProtectionDomain#register}. */
    private final Map<ByteBuffer, RemoteDeviceMemory> memoryByBuffer =
        Collections.synchronizedMap(new IdentityHashMap<>());

    /** A proxy of an object in the peer. */
    interface Proxy {
        /**
         * The object's handle in the peer.
         *
         * @return the handle
         */
        int handle();

        /**
         * The device the object belongs to (for a device, itself).
         *
         * @return the device proxy
         */
        RemoteDevice owner();
    }

    /** Writes a call's arguments. */
    interface Args {
        /**
         * Appends the arguments.
         *
         * @param out the request
         */
        void put(Out out);
    }

    /** No arguments. */
    static final Args NONE = out -> { };

    private RemotePeer(Process process, Deque<String> transcript, Socket socket, DataInputStream in)
        throws IOException {
        this.process = process;
        this.transcript = transcript;
        this.socket = socket;
        this.in = in;
        this.out = socket.getOutputStream();
    }

    /**
     * Forks a peer JVM with this JVM's java, classpath and {@code jsdp.*} properties (so both use the
     * same rendezvous directory) and connects to it.
     *
     * @return the connected peer
     * @throws IOException when the peer cannot be started or does not connect within 30 s
     * @throws InterruptedException when interrupted while waiting for it
     */
    static RemotePeer start() throws IOException, InterruptedException {
        return start(null);
    }

    /**
     * Forks a peer JVM as {@link #start()} does, whose devices {@code devices} opens.
     *
     * @param devices a {@link PeerDevices} class with a public no-argument constructor, or null for SoftRdma
     *     devices of the host fabric
     * @return the connected peer
     * @throws IOException when the peer cannot be started or does not connect within 30 s
     * @throws InterruptedException when interrupted while waiting for it
     */
    static RemotePeer start(Class<? extends PeerDevices> devices) throws IOException, InterruptedException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<String> cmd = new ArrayList<>();
            cmd.add(System.getProperty("java.home") + "/bin/java");
            cmd.add("-ea");
            cmd.add("-XX:+UseSerialGC");
            cmd.add("-Xmx128m");
            cmd.add("-Xshare:auto");
            for (String name : System.getProperties().stringPropertyNames()) {
                if (name.startsWith("jsdp.") || name.startsWith("org.slf4j.")) {
                    cmd.add("-D" + name + "=" + System.getProperty(name));
                }
            }
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(RemotePeerMain.class.getName());
            cmd.add(Integer.toString(server.getLocalPort()));
            if (devices != null) {
                cmd.add(devices.getName());
            }
            Process process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            Deque<String> transcript = drain(process);
            try {
                Socket socket = accept(server, process, transcript);
                socket.setTcpNoDelay(true);
                DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                ByteBuffer hello = RemoteProtocol.readFrame(in);
                if (hello == null || hello.getInt() != 0 || hello.getInt() != RemoteProtocol.MAGIC
                    || hello.getInt() != RemoteProtocol.VERSION || hello.getLong() != process.pid()) {
                    socket.close();
                    throw new IOException("the process that connected is not peer " + process.pid() + " speaking version "
                        + RemoteProtocol.VERSION);
                }
                RemotePeer peer = new RemotePeer(process, transcript, socket, in);
                Thread reader = new Thread(peer::readReplies, "remote-peer-" + process.pid() + "-reader");
                reader.setDaemon(true);
                reader.start();
                return peer;
            } catch (IOException | RuntimeException | InterruptedException e) {
                process.destroyForcibly();
                throw e;
            }
        }
    }

    private static Socket accept(ServerSocket server, Process process, Deque<String> transcript)
        throws IOException, InterruptedException {
        server.setSoTimeout(100);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MS);
        for (;;) {
            try {
                return server.accept();
            } catch (SocketTimeoutException notYet) {
                if (!process.isAlive()) {
                    process.waitFor();
                    throw new IOException("peer JVM exited with " + process.exitValue() + " before connecting; output: "
                        + lines(transcript));
                }
                if (System.nanoTime() > deadline) {
                    throw new IOException("peer JVM " + process.pid() + " did not connect within " + START_TIMEOUT_MS
                        + " ms; output: " + lines(transcript));
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        }
    }

    /** Reads the peer's output on a daemon thread, echoing it to stderr and keeping the last lines. */
    private static Deque<String> drain(Process process) {
        Deque<String> lines = new ArrayDeque<>();
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    System.err.println("[peer " + process.pid() + "] " + line);
                    synchronized (lines) {
                        if (lines.size() == TRANSCRIPT_LINES) {
                            lines.removeFirst();
                        }
                        lines.addLast(line);
                    }
                }
            } catch (IOException ended) {
                // the process is gone
            }
        }, "remote-peer-" + process.pid() + "-output");
        t.setDaemon(true);
        t.start();
        return lines;
    }

    private static String lines(Deque<String> transcript) {
        synchronized (transcript) {
            return transcript.isEmpty() ? "(none)" : String.join("\n  ", transcript);
        }
    }

    /**
     * The peer's process id.
     *
     * @return the pid
     */
    long pid() {
        return process.pid();
    }

    /**
     * Opens a SoftRdma device on the host fabric in the peer, with every object tracked.
     *
     * @return the device's proxy
     * @throws VerbsException when the peer cannot open it
     */
    RemoteDevice openDevice() throws VerbsException {
        ByteBuffer r = call(Op.OPEN_DEVICE, 0, NONE);
        int handle = r.getInt();
        String name = RemoteProtocol.getString(r);
        String provider = RemoteProtocol.getString(r);
        DeviceCapabilities caps = new DeviceCapabilities(r.getInt(), r.getInt(), r.getInt(), r.getInt(), r.getLong(),
            RemoteProtocol.getBoolean(r));
        RemoteDevice d = new RemoteDevice(this, handle, name, provider, caps);
        add(d);
        return d;
    }

    // ---- calls ----

    /**
     * Runs a call in the peer and waits for its reply.
     *
     * @param op the call
     * @param target the handle of the object called
     * @param args writes the arguments
     * @return the result, positioned at its first field
     * @throws VerbsException when the call threw it in the peer
     * @throws PeerGoneException when the peer cannot answer
     */
    ByteBuffer call(Op op, int target, Args args) throws VerbsException {
        try {
            return send(op, target, args, false);
        } catch (InterruptedException impossible) {
            throw new AssertionError(impossible);
        }
    }

    /**
     * Runs a call whose method throws no {@link VerbsException}; should the peer throw one anyway, it
     * arrives unchecked.
     *
     * @param op the call
     * @param target the handle of the object called
     * @param args writes the arguments
     * @return the result
     */
    ByteBuffer invoke(Op op, int target, Args args) {
        try {
            return call(op, target, args);
        } catch (VerbsException e) {
            throw new UncheckedIOException("the peer's " + op + " threw", e);
        }
    }

    /**
     * Runs a call that waits in the peer. An interrupt of the caller interrupts the peer's wait
     * ({@link Op#CANCEL}), so the call ends as a local wait would: with an InterruptedException, or,
     * when it had already returned, with its result and the interrupt status set.
     *
     * @param op the call
     * @param target the handle of the object called
     * @param args writes the arguments
     * @return the result
     * @throws VerbsException when the call threw it in the peer
     * @throws InterruptedException when the caller is interrupted
     */
    ByteBuffer callInterruptibly(Op op, int target, Args args) throws VerbsException, InterruptedException {
        return send(op, target, args, true);
    }

    private ByteBuffer send(Op op, int target, Args args, boolean interruptible)
        throws VerbsException, InterruptedException {
        int id = callIds.incrementAndGet();
        Out request = new Out().putInt(id).putByte(op.ordinal()).putInt(target);
        args.put(request);
        CompletableFuture<ByteBuffer> reply = new CompletableFuture<>();
        pending.put(id, reply);
        Throwable cause = gone;
        if (cause != null) { // the reader may have failed the pending calls before this one was added
            pending.remove(id);
            throw peerGone(op, cause);
        }
        try {
            synchronized (writeLock) {
                RemoteProtocol.writeFrame(out, request.finish());
            }
        } catch (IOException e) {
            pending.remove(id);
            throw peerGone(op, e);
        }
        ByteBuffer r;
        try {
            r = interruptible ? awaitInterruptibly(op, id, reply) : await(op, id, reply);
        } catch (InterruptedException e) {
            r = cancel(op, id, reply);
        }
        if (r.get() == RemoteProtocol.VALUE) {
            return r;
        }
        Throwable t = RemoteProtocol.getThrowable(r, pid());
        if (t instanceof VerbsException v) {
            throw v;
        } else if (t instanceof RuntimeException e) {
            throw e;
        } else if (t instanceof Error e) {
            throw e;
        } else if (t instanceof InterruptedException e && interruptible) {
            Thread.interrupted(); // the interrupt is reported by the exception, as by a local wait
            throw e;
        }
        throw new IllegalStateException("the peer's " + op + " threw", t);
    }

    private ByteBuffer awaitInterruptibly(Op op, int id, CompletableFuture<ByteBuffer> reply)
        throws InterruptedException {
        try {
            return reply.get();
        } catch (ExecutionException e) {
            throw peerGone(op, e.getCause());
        }
    }

    /**
     * The caller was interrupted while its call waits in the peer: interrupts the peer's wait and takes
     * the call's answer, so nothing the wait took (an event, a completion-channel event) is lost. The
     * answer is usually the peer's InterruptedException; when the call had already returned, its value
     * is returned with the caller's interrupt status set again.
     */
    private ByteBuffer cancel(Op op, int id, CompletableFuture<ByteBuffer> reply) {
        try {
            synchronized (writeLock) {
                RemoteProtocol.writeFrame(out, new Out().putInt(callIds.incrementAndGet()).putByte(Op.CANCEL.ordinal())
                    .putInt(0).putInt(id).finish());
            }
        } catch (IOException e) {
            pending.remove(id);
            throw peerGone(op, e);
        }
        ByteBuffer r = await(op, id, reply);
        Thread.currentThread().interrupt(); // kept for the caller (cleared below when the peer's wait threw)
        return r;
    }

    /**
     * Waits for the answer to a call that does not wait in the peer. As the call would not notice an
     * interrupt in this JVM, the wait does not either (it keeps the interrupt status); it is bounded by
     * the peer's death and, for a hung peer, {@link #ANSWER_TIMEOUT_MS}.
     */
    private ByteBuffer await(Op op, int id, CompletableFuture<ByteBuffer> reply) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ANSWER_TIMEOUT_MS);
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw peerGone(op, e.getCause());
                } catch (TimeoutException e) {
                    pending.remove(id);
                    throw peerGone(op, new IOException("no answer within " + ANSWER_TIMEOUT_MS + " ms"));
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private PeerGoneException peerGone(Op op, Throwable cause) {
        return new PeerGoneException("peer JVM " + pid() + " (" + exitStatus() + ") cannot answer " + op
            + "; its last output:\n  " + lines(transcript), cause);
    }

    /** The peer's state for a message: a connection that ended usually means the process is exiting. */
    private String exitStatus() {
        try {
            if (process.waitFor(1, TimeUnit.SECONDS)) {
                return "exited with " + process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "still running";
    }

    /** The peer cannot answer: it exited, was closed, or does not answer at all. */
    static final class PeerGoneException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        PeerGoneException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The reader thread: hands each reply to its caller until the connection ends. */
    private void readReplies() {
        Throwable end;
        try {
            for (;;) {
                ByteBuffer frame = RemoteProtocol.readFrame(in);
                if (frame == null) {
                    end = new IOException("the peer closed the connection");
                    break;
                }
                CompletableFuture<ByteBuffer> reply = pending.remove(frame.getInt());
                if (reply != null) {
                    reply.complete(frame);
                } // else the caller stopped waiting (interrupted)
            }
        } catch (IOException | RuntimeException e) {
            end = e;
        }
        fail(end);
    }

    private void fail(Throwable cause) {
        if (gone == null) {
            gone = cause;
        }
        for (Integer id : List.copyOf(pending.keySet())) {
            CompletableFuture<ByteBuffer> reply = pending.remove(id);
            if (reply != null) {
                reply.completeExceptionally(cause);
            }
        }
    }

    // ---- proxies ----

    /**
     * Closes an object in the peer, unless its device is closed (which closed the object too, as
     * SoftRdma's device close does).
     *
     * @param op the close call
     * @param p the object
     * @throws VerbsException when the close fails in the peer (e.g. {@link Errno#EBUSY})
     */
    void close(Op op, Proxy p) throws VerbsException {
        if (p.owner().isOpen()) {
            call(op, p.handle(), NONE);
        }
    }

    /**
     * As {@link #close(Op, Proxy)}, for objects whose close throws no {@link VerbsException}.
     *
     * @param op the close call
     * @param p the object
     */
    void closeQuietly(Op op, Proxy p) {
        if (p.owner().isOpen()) {
            invoke(op, p.handle(), NONE);
        }
    }

    /** Records a new proxy under its handle. */
    void add(Proxy proxy) {
        proxies.put(proxy.handle(), proxy);
    }

    /**
     * The proxy of a handle the peer sent, made on first sight.
     *
     * @param handle the handle
     * @param type the expected proxy type
     * @param create makes the proxy for a handle not seen before
     * @param <T> the proxy type
     * @return the one proxy of the handle
     */
    <T extends Proxy> T proxy(int handle, Class<T> type, IntFunction<T> create) {
        return type.cast(proxies.computeIfAbsent(handle, create::apply));
    }

    /**
     * The proxy of a handle that must be known (an object created through a proxy).
     *
     * @param handle the handle
     * @param type the expected type
     * @param <T> the proxy type
     * @return the proxy
     * @throws IllegalStateException when the handle is unknown
     */
    <T extends Proxy> T known(int handle, Class<T> type) {
        Proxy p = proxies.get(handle);
        if (p == null) {
            throw new IllegalStateException("peer " + pid() + " named unknown " + type.getSimpleName() + " handle " + handle);
        }
        return type.cast(p);
    }

    /**
     * The handle of an object an application passes to a proxy: it must be a proxy of this peer, of
     * the same device, as a device checks that objects are its own.
     *
     * @param o the object, or null
     * @param type the proxy type it must be
     * @param device the device it must belong to
     * @param what names the argument for the exception
     * @return its handle, or 0 for null
     * @throws VerbsException {@link Errno#EINVAL} when it is not an object of {@code device}
     */
    int handleOf(Object o, Class<? extends Proxy> type, RemoteDevice device, String what) throws VerbsException {
        if (o == null) {
            return 0;
        }
        if (!type.isInstance(o) || ((Proxy) o).owner() != device || proxies.get(((Proxy) o).handle()) != o) {
            throw new VerbsException(Errno.EINVAL, what + " " + o + " belongs to another device than " + device);
        }
        return ((Proxy) o).handle();
    }

    /** Records the mapping of device memory, so registering its buffer names it. */
    void addMemory(RemoteDeviceMemory memory) {
        memoryByBuffer.put(memory.buffer(), memory);
    }

    /** Forgets device memory that was freed. */
    void removeMemory(RemoteDeviceMemory memory) {
        memoryByBuffer.remove(memory.buffer());
    }

    /**
     * The device memory whose mapping is {@code buffer}.
     *
     * @param buffer a buffer given to a proxy domain
     * @return the memory, or null when the buffer is not a mapping of this peer's device memory
     */
    RemoteDeviceMemory memoryOf(ByteBuffer buffer) {
        return memoryByBuffer.get(buffer);
    }

    /** Forgets the proxies of a closed device, as the peer forgets their handles. */
    void forget(RemoteDevice device) {
        proxies.values().removeIf(p -> p.owner() == device);
        synchronized (memoryByBuffer) {
            memoryByBuffer.values().removeIf(m -> m.owner() == device);
        }
    }

    /**
     * Kills the peer with SIGKILL, as a crash, and reaps it; for tests of what callers see then.
     *
     * @throws InterruptedException when interrupted while reaping
     */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("peer JVM " + pid() + " survived SIGKILL");
        }
    }

    /**
     * Ends the connection, which makes the peer close its devices and exit; kills it if it has not
     * exited within 5 s, and reaps it. Keeps the caller's interrupt status.
     */
    @Override
    public void close() {
        fail(new IOException("the peer was closed"));
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        boolean interrupted = false;
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("peer JVM " + pid() + " survived SIGKILL");
                }
            }
        } catch (InterruptedException e) {
            interrupted = true;
            process.destroyForcibly();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "RemotePeer[pid " + pid() + "]";
    }
}
