package io.jsdp.testbed;

import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The wire of the test-only remote device: how {@link RemotePeer} (the test JVM) asks
 * {@link RemotePeerMain} (a forked peer JVM) to run verbs calls on the peer's devices, over one
 * loopback TCP connection. (Not a Unix-domain socket: the JDK offers those only as interruptible
 * channels, which an interrupt closes, and a JUnit timeout interrupts the calling thread.) Every
 * frame is length-prefixed; all integers are big-endian.
 *
 * <pre>
 *  request (test JVM → peer)                 reply (peer → test JVM)
 *   0        4        8    9        13         0        4        8      9
 *  +--------+--------+----+--------+------    +--------+--------+------+---------
 *  | length | callId | op | target | args     | length | callId | kind | result
 *  +--------+--------+----+--------+------    +--------+--------+------+---------
 *  length: bytes after the length field      kind: VALUE, or THROWN followed by an
 *  op: {@link Op} ordinal                          exception (see {@link #putThrowable})
 *  target: handle of the object called, 0 for the peer itself
 * </pre>
 *
 * <p>Objects are named by <em>handles</em>: positive ints the peer gives each object when it first
 * crosses the wire (created by a call, or carried by an event), and forgets when their device closes.
 * A call's arguments and results are its parameters in declaration order: ints, longs, booleans as
 * one byte, strings as a UTF-8 byte array, byte arrays as an int length (-1 for null) and the bytes,
 * enums as their ordinal. The peer sends one frame first, {@code callId 0}: {@link #MAGIC},
 * {@link #VERSION} and its process id.
 *
 * <p>Calls are answered in any order (a waiting call, {@code CompletionChannel.await} or
 * {@code CmEventChannel.poll}, must not hold up others), so the caller matches replies by call id.
 * Every request has exactly one reply, except {@link Op#CANCEL}, which has none.
 * One thread of the test JVM sees its calls executed in the order it made them, because it waits for
 * each reply before the next call.
 */
final class RemoteProtocol {
    /** First word of the peer's hello frame: "JSDP". */
    static final int MAGIC = 0x4A534450;
    /** Version of this protocol; the hello carries it and the test JVM refuses another. */
    static final int VERSION = 1;
    /** Reply kind: the call returned; its result follows. */
    static final byte VALUE = 0;
    /** Reply kind: the call threw; the exception follows. */
    static final byte THROWN = 1;
    /** Largest frame either side accepts: bounds a corrupt length, far above any real call. */
    static final int MAX_FRAME_BYTES = 16 << 20;

    private RemoteProtocol() {
    }

    /** The calls. Target and arguments are listed as {@code target(arguments) → result}. */
    enum Op {
        /**
         * peer(call id) → no reply: interrupts that call if it still waits in the peer, as an interrupt
         * of the caller would have interrupted the wait in one JVM. The call then answers as usual.
         */
        CANCEL,
        /** peer() → device, name, provider, capabilities (maxQpWr, maxSge, maxInlineData, maxCqe, maxMrSize, atomics). */
        OPEN_DEVICE,
        /** device() → nothing. */
        DEVICE_CLOSE,
        /** device() → PD handle. */
        ALLOCATE_PD,
        /** device() → completion-channel handle. */
        CREATE_COMPLETION_CHANNEL,
        /** device(channel or 0, entries) → CQ handle, capacity. */
        CREATE_CQ,
        /** device(bytes) → device-memory handle, size, segment file path. */
        ALLOCATE_MEMORY,
        /** device() → event-channel handle. */
        CREATE_EVENT_CHANNEL,
        /** device(event channel) → CM id handle. */
        CREATE_ID,
        /** device() → open count, leak report. */
        OPEN_RESOURCES,
        /** device(ns) → nothing: the device's RDMA READ delay fault. */
        FAULT_READ_DELAY,
        /** device(address) → nothing: black-holes address resolution towards the address. */
        FAULT_BLACKHOLE,
        /** pd(device memory, access) → MR handle, address, length, lkey, rkey, access. */
        PD_REGISTER,
        /** pd() → nothing. */
        PD_CLOSE,
        /** memory() → nothing. */
        MEMORY_CLOSE,
        /** mr() → nothing. */
        MR_CLOSE,
        /** completion channel(timeoutNs) → CQ handle or 0. */
        CHANNEL_AWAIT,
        /** completion channel() → nothing. */
        CHANNEL_CLOSE,
        /** cq(array length, max) → count or negative errno, then the completions. */
        CQ_POLL,
        /** cq(solicitedOnly) → status code. */
        CQ_REQUEST_NOTIFY,
        /** cq(count) → nothing. */
        CQ_ACKNOWLEDGE,
        /** cq() → nothing. */
        CQ_CLOSE,
        /** qp() → state. */
        QP_STATE,
        /** qp(send work request) → status code. */
        QP_POST_SEND,
        /** qp(receive work request) → status code. */
        QP_POST_RECV,
        /** qp(state) → nothing. */
        QP_MODIFY,
        /** qp() → send CQ, receive CQ, attributes. */
        QP_ATTRIBUTES,
        /** qp() → nothing. */
        QP_CLOSE,
        /** event channel(timeoutNs) → present, then the event. */
        EVENTS_POLL,
        /** event channel() → nothing. */
        EVENTS_CLOSE,
        /** id(address) → nothing. */
        ID_BIND,
        /** id(backlog) → nothing. */
        ID_LISTEN,
        /** id(address, timeoutMs) → nothing. */
        ID_RESOLVE_ADDRESS,
        /** id(timeoutMs) → nothing. */
        ID_RESOLVE_ROUTE,
        /** id(pd, send CQ, receive CQ, attributes) → queue-pair reference. */
        ID_CREATE_QP,
        /** id() → queue-pair reference or 0. */
        ID_QUEUE_PAIR,
        /** id(parameters) → nothing. */
        ID_CONNECT,
        /** id(parameters) → nothing. */
        ID_ACCEPT,
        /** id(private data or null) → nothing. */
        ID_REJECT,
        /** id() → nothing. */
        ID_DISCONNECT,
        /** id() → address. */
        ID_LOCAL_ADDRESS,
        /** id() → address. */
        ID_REMOTE_ADDRESS,
        /** id() → nothing. */
        ID_CLOSE;

        private static final Op[] BY_ORDINAL = values();

        static Op of(int ordinal) {
            if (ordinal < 0 || ordinal >= BY_ORDINAL.length) {
                throw new IllegalArgumentException("unknown op " + ordinal);
            }
            return BY_ORDINAL[ordinal];
        }
    }

    /** A frame being written: a growable big-endian buffer whose first four bytes become the length. */
    static final class Out {
        private ByteBuffer buf = ByteBuffer.allocate(128);

        Out() {
            buf.putInt(0);
        }

        private Out room(int bytes) {
            if (buf.remaining() < bytes) {
                ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + bytes));
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
            return this;
        }

        Out putByte(int v) {
            room(1).buf.put((byte) v);
            return this;
        }

        Out putBoolean(boolean v) {
            return putByte(v ? 1 : 0);
        }

        Out putInt(int v) {
            room(4).buf.putInt(v);
            return this;
        }

        Out putLong(long v) {
            room(8).buf.putLong(v);
            return this;
        }

        /** A byte array as its length (-1 for null) and its bytes. */
        Out putBytes(byte[] v) {
            if (v == null) {
                return putInt(-1);
            }
            putInt(v.length);
            room(v.length).buf.put(v);
            return this;
        }

        Out putString(String v) {
            return putBytes(v == null ? null : v.getBytes(StandardCharsets.UTF_8));
        }

        /** Ends the frame: writes the length, returns the bytes to send. */
        ByteBuffer finish() {
            buf.putInt(0, buf.position() - 4);
            return buf.flip();
        }
    }

    /**
     * Writes one finished frame; the caller serialises writers.
     *
     * @param out the socket's stream (unbuffered: one write, one segment)
     * @param frame from {@link Out#finish()}
     * @throws IOException when the socket fails
     */
    static void writeFrame(OutputStream out, ByteBuffer frame) throws IOException {
        out.write(frame.array(), frame.arrayOffset(), frame.limit());
    }

    /**
     * Reads one frame; the caller is the socket's only reader.
     *
     * @param in the socket's stream
     * @return the frame after its length field, or null at a clean end of stream
     * @throws IOException when the socket fails, the stream ends inside a frame, or the length is absurd
     */
    static ByteBuffer readFrame(DataInputStream in) throws IOException {
        int n;
        try {
            n = in.readInt();
        } catch (EOFException end) {
            return null;
        }
        if (n < 4 || n > MAX_FRAME_BYTES) {
            throw new IOException("corrupt frame length " + n);
        }
        byte[] frame = new byte[n];
        in.readFully(frame);
        return ByteBuffer.wrap(frame);
    }

    static boolean getBoolean(ByteBuffer in) {
        return in.get() != 0;
    }

    static byte[] getBytes(ByteBuffer in) {
        int n = in.getInt();
        if (n < 0) {
            return null;
        }
        byte[] b = new byte[n];
        in.get(b);
        return b;
    }

    static String getString(ByteBuffer in) {
        byte[] b = getBytes(in);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    // ---- addresses: 0 null, 1 resolved (address bytes, port), 2 unresolved (host name, port) ----

    static Out putAddress(Out out, InetSocketAddress a) {
        if (a == null) {
            return out.putByte(0);
        } else if (a.getAddress() != null) {
            return out.putByte(1).putBytes(a.getAddress().getAddress()).putInt(a.getPort());
        }
        return out.putByte(2).putString(a.getHostString()).putInt(a.getPort());
    }

    static InetSocketAddress getAddress(ByteBuffer in) {
        switch (in.get()) {
            case 0:
                return null;
            case 1:
                return new InetSocketAddress(getInetAddress(getBytes(in)), in.getInt());
            case 2: {
                String host = getString(in);
                return InetSocketAddress.createUnresolved(host, in.getInt());
            }
            default:
                throw new IllegalArgumentException("corrupt address tag");
        }
    }

    static InetAddress getInetAddress(byte[] bytes) {
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("corrupt address of " + bytes.length + " bytes", e);
        }
    }

    // ---- work requests: every field, the scatter/gather list at its capacity ----

    static void putSend(Out out, SendWorkRequest wr) {
        out.putLong(wr.wrId()).putByte(wr.opcode().ordinal()).putInt(wr.flags()).putInt(wr.immData())
            .putLong(wr.remoteAddress()).putInt(wr.rkey()).putInt(wr.maxSge()).putInt(wr.numSge());
        for (int i = 0; i < wr.numSge(); i++) {
            out.putLong(wr.sgeAddress(i)).putInt(wr.sgeLength(i)).putInt(wr.sgeLkey(i));
        }
    }

    static SendWorkRequest getSend(ByteBuffer in) {
        long wrId = in.getLong();
        Opcode opcode = Opcode.values()[in.get()];
        int flags = in.getInt();
        int imm = in.getInt();
        long remoteAddress = in.getLong();
        int rkey = in.getInt();
        SendWorkRequest wr = new SendWorkRequest(in.getInt()).wrId(wrId).opcode(opcode).flags(flags).immData(imm)
            .remote(remoteAddress, rkey);
        int n = in.getInt();
        for (int i = 0; i < n; i++) {
            wr.sge(i, in.getLong(), in.getInt(), in.getInt());
        }
        return wr.numSge(n);
    }

    static void putRecv(Out out, ReceiveWorkRequest wr) {
        out.putLong(wr.wrId()).putInt(wr.maxSge()).putInt(wr.numSge());
        for (int i = 0; i < wr.numSge(); i++) {
            out.putLong(wr.sgeAddress(i)).putInt(wr.sgeLength(i)).putInt(wr.sgeLkey(i));
        }
    }

    static ReceiveWorkRequest getRecv(ByteBuffer in) {
        long wrId = in.getLong();
        ReceiveWorkRequest wr = new ReceiveWorkRequest(in.getInt()).wrId(wrId);
        int n = in.getInt();
        for (int i = 0; i < n; i++) {
            wr.sge(i, in.getLong(), in.getInt(), in.getInt());
        }
        return wr.numSge(n);
    }

    // ---- completions ----

    static void putCompletion(Out out, WorkCompletion wc) {
        out.putLong(wc.wrId()).putByte(wc.status().ordinal()).putByte(wc.opcode().ordinal()).putInt(wc.byteLen())
            .putInt(wc.immData()).putInt(wc.flags()).putInt(wc.qpNumber());
    }

    static void getCompletion(ByteBuffer in, WorkCompletion into) {
        into.set(in.getLong(), WcStatus.values()[in.get()], WcOpcode.values()[in.get()], in.getInt(), in.getInt(),
            in.getInt(), in.getInt());
    }

    // ---- queue-pair attributes (the completion queues travel as handles, before these) ----

    static void putAttributes(Out out, QueuePairAttributes a) {
        out.putInt(a.maxSendWr()).putInt(a.maxRecvWr()).putInt(a.maxSendSge()).putInt(a.maxRecvSge())
            .putInt(a.maxInlineData()).putBoolean(a.signalAll()).putLong(a.ackTimeoutNs()).putLong(a.minRnrTimerNs());
    }

    static QueuePairAttributes getAttributes(ByteBuffer in) {
        return new QueuePairAttributes().maxSendWr(in.getInt()).maxRecvWr(in.getInt()).maxSendSge(in.getInt())
            .maxRecvSge(in.getInt()).maxInlineData(in.getInt()).signalAll(getBoolean(in)).ackTimeoutNs(in.getLong())
            .minRnrTimerNs(in.getLong());
    }

    // ---- connection parameters ----

    static void putParameters(Out out, ConnectionParameters p) {
        out.putInt(p.retryCount()).putInt(p.rnrRetryCount()).putBytes(p.privateData()).putInt(p.connectTimeoutMs());
    }

    static ConnectionParameters getParameters(ByteBuffer in) {
        return new ConnectionParameters().retryCount(in.getInt()).rnrRetryCount(in.getInt()).privateData(getBytes(in))
            .connectTimeoutMs(in.getInt());
    }

    // ---- exceptions: class name, message, errno (VerbsException), then the peer's stack ----

    /**
     * Writes an exception thrown in the peer.
     *
     * @param out the reply
     * @param t the exception
     */
    static void putThrowable(Out out, Throwable t) {
        out.putString(t.getClass().getName());
        if (t instanceof VerbsException v) {
            out.putInt(v.errno()).putString(bareMessage(v));
        } else {
            out.putInt(0).putString(t.getMessage());
        }
        StackTraceElement[] stack = t.getStackTrace();
        out.putInt(stack.length);
        for (StackTraceElement e : stack) {
            out.putString(e.getClassName()).putString(e.getMethodName()).putString(e.getFileName())
                .putInt(e.getLineNumber());
        }
    }

    /** The message a VerbsException was created with: its message less the errno name it appended. */
    private static String bareMessage(VerbsException v) {
        String m = v.getMessage();
        String suffix = " (" + Errno.name(v.errno()) + ")";
        return m != null && m.endsWith(suffix) ? m.substring(0, m.length() - suffix.length()) : m;
    }

    /**
     * Reads an exception the peer threw and rebuilds it in this JVM: the same type for the port's
     * {@link VerbsException} (with its errno and message) and the JDK's usual unchecked exceptions, an
     * {@link IllegalStateException} naming the type otherwise. Its cause carries the peer's stack.
     *
     * @param in the reply, after its kind
     * @param peerPid the peer's process id, for the cause's message
     * @return the exception, to be thrown by the caller
     */
    static Throwable getThrowable(ByteBuffer in, long peerPid) {
        String type = getString(in);
        int errno = in.getInt();
        String message = getString(in);
        StackTraceElement[] stack = new StackTraceElement[in.getInt()];
        for (int i = 0; i < stack.length; i++) {
            stack[i] = new StackTraceElement(getString(in), getString(in), getString(in), in.getInt());
        }
        Throwable t = rebuild(type, errno, message);
        PeerStackTrace where = new PeerStackTrace(type + " in peer JVM " + peerPid);
        where.setStackTrace(stack);
        t.initCause(where);
        return t;
    }

    private static Throwable rebuild(String type, int errno, String message) {
        switch (type) {
            case "io.jsdp.verbs.VerbsException":
                return new VerbsException(errno, message);
            case "java.lang.IllegalArgumentException":
                return new IllegalArgumentException(message);
            case "java.lang.IllegalStateException":
                return new IllegalStateException(message);
            case "java.lang.UnsupportedOperationException":
                return new UnsupportedOperationException(message);
            case "java.lang.NullPointerException":
                return new NullPointerException(message);
            case "java.lang.IndexOutOfBoundsException":
            case "java.lang.ArrayIndexOutOfBoundsException":
                return new IndexOutOfBoundsException(message);
            case "java.lang.ClassCastException":
                return new ClassCastException(message);
            case "java.lang.InterruptedException":
                return new InterruptedException(message);
            case "java.lang.AssertionError":
                return new AssertionError(message);
            default:
                return new IllegalStateException(type + " in the peer: " + message);
        }
    }

    /** The stack of an exception as the peer JVM saw it, attached as the rebuilt exception's cause. */
    static final class PeerStackTrace extends Exception {
        private static final long serialVersionUID = 1L;

        PeerStackTrace(String message) {
            super(message, null, false, true);
        }
    }
}
