package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.RemoteProtocol.Op;
import io.jsdp.testbed.RemoteProtocol.Out;
import io.jsdp.testbed.shm.SharedSegment;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.DeviceCapabilities;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.WorkCompletion;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The peer JVM of {@link RemotePeer}: connects back to the test JVM's port and runs the calls it
 * receives ({@link RemoteProtocol}) on SoftRdma devices of the host fabric, each call on a pool thread
 * so that a call that waits (completion-channel await, event poll) holds up no other. When the
 * connection ends it closes its devices and exits.
 */
final class RemotePeerMain {
    private final DataInputStream in;
    /** Guards writes to {@link #out}: one reply frame at a time. */
    private final Object writeLock = new Object();
    private final OutputStream out;
    private final Registry registry = new Registry();
    /** What {@link Op#OPEN_DEVICE} opens. */
    private final PeerDevices devices;
    private final ExecutorService calls;
    /** Calls being run, by call id, so {@link Op#CANCEL} can interrupt them; guarded by itself. */
    private final Map<Integer, Thread> running = new HashMap<>();
    /** Ids of calls cancelled before they started; guarded by {@link #running}. */
    private final Set<Integer> cancelled = new HashSet<>();

    private RemotePeerMain(Socket socket, PeerDevices devices) throws IOException {
        this.devices = devices;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = socket.getOutputStream();
        AtomicInteger threads = new AtomicInteger();
        this.calls = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "remote-peer-call-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Serves the test JVM listening on loopback port {@code args[0]} until it disconnects.
     *
     * @param args the port; optionally the name of a {@link PeerDevices} class whose devices to open
     *     (default: SoftRdma devices of the host fabric)
     * @throws Exception when the connection cannot be made (the test JVM sees the output)
     */
    public static void main(String[] args) throws Exception {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), Integer.parseInt(args[0]));
        socket.setTcpNoDelay(true);
        PeerDevices devices = args.length > 1
            ? (PeerDevices) Class.forName(args[1]).getDeclaredConstructor().newInstance() : PeerDevices.SOFT;
        RemotePeerMain peer = new RemotePeerMain(socket, devices);
        int status = peer.serve();
        System.exit(status);
    }

    /** Reads requests until the connection ends; returns the exit status. */
    private int serve() {
        try {
            write(new Out().putInt(0).putInt(RemoteProtocol.MAGIC).putInt(RemoteProtocol.VERSION)
                .putLong(ProcessHandle.current().pid()));
            for (ByteBuffer frame; (frame = RemoteProtocol.readFrame(in)) != null;) {
                if (frame.get(4) == Op.CANCEL.ordinal()) {
                    cancel(frame.getInt(9));
                    continue;
                }
                ByteBuffer request = frame;
                calls.execute(() -> answer(request));
            }
            return 0;
        } catch (IOException e) {
            System.err.println("remote peer: connection failed: " + e);
            return 1;
        } finally {
            calls.shutdownNow();
            registry.closeDevices();
        }
    }

    /** Interrupts a call that runs, or marks it to be interrupted when it starts. */
    private void cancel(int callId) {
        synchronized (running) {
            Thread t = running.get(callId);
            if (t != null) {
                t.interrupt();
            } else {
                cancelled.add(callId); // not started yet (or already answered: then never looked at)
            }
        }
    }

    private void answer(ByteBuffer request) {
        int callId = request.getInt();
        synchronized (running) {
            if (cancelled.remove(callId)) {
                Thread.currentThread().interrupt();
            }
            running.put(callId, Thread.currentThread());
        }
        Out reply = new Out().putInt(callId).putByte(RemoteProtocol.VALUE);
        try {
            run(Op.of(request.get()), request.getInt(), request, reply);
        } catch (Throwable t) { // every failure goes back to the caller, where the test sees it
            reply = new Out().putInt(callId).putByte(RemoteProtocol.THROWN);
            RemoteProtocol.putThrowable(reply, t);
        } finally {
            synchronized (running) {
                running.remove(callId);
                Thread.interrupted(); // a late cancel must not reach the pool thread's next call
            }
        }
        try {
            write(reply);
        } catch (IOException gone) {
            // the test JVM went away; serve() ends at the same time
        }
    }

    private void write(Out frame) throws IOException {
        synchronized (writeLock) {
            RemoteProtocol.writeFrame(out, frame.finish());
        }
    }

    /** Runs one call on {@code target} with the arguments in {@code in}, writing its result to {@code r}. */
    private void run(Op op, int target, ByteBuffer in, Out r) throws Exception {
        switch (op) {
            case OPEN_DEVICE: {
                RdmaDevice d = devices.open();
                DeviceCapabilities c = d.capabilities();
                r.putInt(registry.addDevice(d)).putString(d.name()).putString(d.provider()).putInt(c.maxQpWr())
                    .putInt(c.maxSge()).putInt(c.maxInlineData()).putInt(c.maxCqe()).putLong(c.maxMrSize())
                    .putBoolean(c.atomics());
                break;
            }
            case DEVICE_CLOSE:
                registry.get(target, RdmaDevice.class).close();
                registry.forgetDevice(target);
                break;
            case ALLOCATE_PD:
                r.putInt(registry.add(registry.get(target, RdmaDevice.class).allocateProtectionDomain(), target));
                break;
            case CREATE_COMPLETION_CHANNEL:
                r.putInt(registry.add(registry.get(target, RdmaDevice.class).createCompletionChannel(), target));
                break;
            case CREATE_CQ: {
                CompletionChannel ch = registry.getOrNull(in.getInt(), CompletionChannel.class);
                CompletionQueue cq = registry.get(target, RdmaDevice.class).createCompletionQueue(ch, in.getInt());
                r.putInt(registry.add(cq, target)).putInt(cq.capacity());
                break;
            }
            case ALLOCATE_MEMORY: {
                DeviceMemory m = registry.get(target, RdmaDevice.class).allocateMemory(in.getInt());
                SharedSegment segment = m instanceof SoftDeviceMemory soft ? soft.segment() : null;
                r.putInt(registry.add(m, target)).putInt(m.size())
                    .putString(segment == null ? null : segment.path().toAbsolutePath().toString());
                break;
            }
            case CREATE_EVENT_CHANNEL:
                r.putInt(registry.add(registry.get(target, RdmaDevice.class).createEventChannel(), target));
                break;
            case CREATE_ID: {
                CmEventChannel ch = registry.getOrNull(in.getInt(), CmEventChannel.class);
                r.putInt(registry.add(registry.get(target, RdmaDevice.class).createId(ch), target));
                break;
            }
            case OPEN_RESOURCES: {
                ResourceTracker t = registry.get(target, RdmaDevice.class).resources();
                r.putInt(t.openCount()).putString(t.report());
                break;
            }
            case FAULT_READ_DELAY:
                devices.faultsOf(registry.get(target, RdmaDevice.class)).faults().readDelayNs(in.getLong());
                break;
            case FAULT_BLACKHOLE:
                devices.faultsOf(registry.get(target, RdmaDevice.class)).faults()
                    .blackhole(RemoteProtocol.getInetAddress(RemoteProtocol.getBytes(in)));
                break;
            case PD_REGISTER: {
                DeviceMemory m = registry.getOrNull(in.getInt(), DeviceMemory.class);
                MemoryRegion mr = registry.get(target, ProtectionDomain.class).register(m == null ? null : m.buffer(),
                    in.getInt());
                r.putInt(registry.add(mr, target)).putLong(mr.address()).putInt(mr.length()).putInt(mr.lkey())
                    .putInt(mr.rkey()).putInt(mr.access());
                break;
            }
            case PD_CLOSE:
                registry.get(target, ProtectionDomain.class).close();
                break;
            case MEMORY_CLOSE:
                registry.get(target, DeviceMemory.class).close();
                break;
            case MR_CLOSE:
                registry.get(target, MemoryRegion.class).close();
                break;
            case CHANNEL_AWAIT: {
                CompletionQueue cq = registry.get(target, CompletionChannel.class).await(in.getLong());
                r.putInt(cq == null ? 0 : registry.handleOf(cq));
                break;
            }
            case CHANNEL_CLOSE:
                registry.get(target, CompletionChannel.class).close();
                break;
            case CQ_POLL: {
                WorkCompletion[] wcs = new WorkCompletion[in.getInt()];
                for (int i = 0; i < wcs.length; i++) {
                    wcs[i] = new WorkCompletion();
                }
                int n = registry.get(target, CompletionQueue.class).poll(wcs, in.getInt());
                r.putInt(n);
                for (int i = 0; i < n; i++) {
                    RemoteProtocol.putCompletion(r, wcs[i]);
                }
                break;
            }
            case CQ_REQUEST_NOTIFY:
                r.putInt(registry.get(target, CompletionQueue.class).requestNotify(RemoteProtocol.getBoolean(in)));
                break;
            case CQ_ACKNOWLEDGE:
                registry.get(target, CompletionQueue.class).acknowledgeEvents(in.getInt());
                break;
            case CQ_CLOSE:
                registry.get(target, CompletionQueue.class).close();
                break;
            case QP_STATE:
                r.putByte(registry.get(target, QueuePair.class).state().ordinal());
                break;
            case QP_POST_SEND:
                r.putInt(registry.get(target, QueuePair.class).postSend(RemoteProtocol.getSend(in)));
                break;
            case QP_POST_RECV:
                r.putInt(registry.get(target, QueuePair.class).postRecv(RemoteProtocol.getRecv(in)));
                break;
            case QP_MODIFY:
                registry.get(target, QueuePair.class).modify(QpState.values()[in.get()]);
                break;
            case QP_ATTRIBUTES: {
                QueuePairAttributes a = registry.get(target, QueuePair.class).attributes();
                r.putInt(registry.handleOrZero(a.sendCq())).putInt(registry.handleOrZero(a.recvCq()));
                RemoteProtocol.putAttributes(r, a);
                break;
            }
            case QP_CLOSE:
                registry.get(target, QueuePair.class).close();
                break;
            case EVENTS_POLL: {
                CmEvent e = registry.get(target, CmEventChannel.class).poll(in.getLong());
                r.putBoolean(e != null);
                if (e != null) {
                    r.putByte(e.type().ordinal());
                    putId(r, e.id(), target);
                    putId(r, e.listenId(), target);
                    r.putInt(e.status()).putBytes(e.privateData());
                }
                break;
            }
            case EVENTS_CLOSE:
                registry.get(target, CmEventChannel.class).close();
                break;
            case ID_BIND:
                registry.get(target, CmId.class).bind(RemoteProtocol.getAddress(in));
                break;
            case ID_LISTEN:
                registry.get(target, CmId.class).listen(in.getInt());
                break;
            case ID_RESOLVE_ADDRESS:
                registry.get(target, CmId.class).resolveAddress(RemoteProtocol.getAddress(in), in.getInt());
                break;
            case ID_RESOLVE_ROUTE:
                registry.get(target, CmId.class).resolveRoute(in.getInt());
                break;
            case ID_CREATE_QP: {
                ProtectionDomain pd = registry.getOrNull(in.getInt(), ProtectionDomain.class);
                CompletionQueue sendCq = registry.getOrNull(in.getInt(), CompletionQueue.class);
                CompletionQueue recvCq = registry.getOrNull(in.getInt(), CompletionQueue.class);
                QueuePairAttributes a = RemoteProtocol.getAttributes(in).sendCq(sendCq).recvCq(recvCq);
                putQueuePair(r, registry.get(target, CmId.class).createQueuePair(pd, a), target);
                break;
            }
            case ID_QUEUE_PAIR:
                putQueuePair(r, registry.get(target, CmId.class).queuePair(), target);
                break;
            case ID_CONNECT:
                registry.get(target, CmId.class).connect(RemoteProtocol.getParameters(in));
                break;
            case ID_ACCEPT:
                registry.get(target, CmId.class).accept(RemoteProtocol.getParameters(in));
                break;
            case ID_REJECT:
                registry.get(target, CmId.class).reject(RemoteProtocol.getBytes(in));
                break;
            case ID_DISCONNECT:
                registry.get(target, CmId.class).disconnect();
                break;
            case ID_LOCAL_ADDRESS:
                RemoteProtocol.putAddress(r, registry.get(target, CmId.class).localAddress());
                break;
            case ID_REMOTE_ADDRESS:
                RemoteProtocol.putAddress(r, registry.get(target, CmId.class).remoteAddress());
                break;
            case ID_CLOSE:
                registry.get(target, CmId.class).close();
                break;
            default:
                throw new IllegalArgumentException("unhandled op " + op);
        }
    }

    /** An id reference: its handle (given now if the id is new, as a connect request's is) and its channel's. */
    private void putId(Out r, CmId id, int related) {
        if (id == null) {
            r.putInt(0);
            return;
        }
        r.putInt(registry.addIfAbsent(id, related)).putInt(registry.handleOf(id.channel()));
    }

    /** A queue-pair reference: handle, number and the handle of its domain, or handle 0 for none. */
    private void putQueuePair(Out r, QueuePair qp, int related) {
        if (qp == null) {
            r.putInt(0);
            return;
        }
        r.putInt(registry.addIfAbsent(qp, related)).putInt(qp.qpNumber()).putInt(registry.handleOf(qp.protectionDomain()));
    }

    /**
     * The objects the test JVM can name, by handle, each with the handle of its device. Handles are
     * never reused; a device's are forgotten when it closes. Guarded by its monitor (calls are short).
     */
    private static final class Registry {
        private final Map<Integer, Object> objects = new HashMap<>();
        private final Map<Object, Integer> handles = new IdentityHashMap<>();
        /** The device handle of every handle (a device's is its own). */
        private final Map<Integer, Integer> deviceOf = new HashMap<>();
        private int next = 1;

        synchronized int addDevice(RdmaDevice d) {
            int h = next++;
            objects.put(h, d);
            handles.put(d, h);
            deviceOf.put(h, h);
            return h;
        }

        /** Adds an object made through {@code related} (its device, or an object of its device). */
        synchronized int add(Object o, int related) {
            Integer device = deviceOf.get(related);
            if (device == null) {
                throw new IllegalStateException("handle " + related + " is unknown");
            }
            int h = next++;
            objects.put(h, o);
            handles.put(o, h);
            deviceOf.put(h, device);
            return h;
        }

        synchronized int addIfAbsent(Object o, int related) {
            Integer h = handles.get(o);
            return h != null ? h : add(o, related);
        }

        synchronized <T> T get(int handle, Class<T> type) {
            Object o = objects.get(handle);
            if (o == null) {
                throw new IllegalStateException("no object has handle " + handle + " (was its device closed?)");
            }
            if (!type.isInstance(o)) {
                throw new IllegalStateException("handle " + handle + " is a " + o.getClass().getSimpleName() + ", not a "
                    + type.getSimpleName());
            }
            return type.cast(o);
        }

        <T> T getOrNull(int handle, Class<T> type) {
            return handle == 0 ? null : get(handle, type);
        }

        synchronized int handleOf(Object o) {
            Integer h = handles.get(o);
            if (h == null) {
                throw new IllegalStateException(o + " has no handle: it was not made through the test JVM");
            }
            return h;
        }

        int handleOrZero(Object o) {
            return o == null ? 0 : handleOf(o);
        }

        /** Forgets a closed device's handles. */
        synchronized void forgetDevice(int device) {
            List<Integer> gone = new ArrayList<>();
            deviceOf.forEach((h, d) -> {
                if (d == device) {
                    gone.add(h);
                }
            });
            for (Integer h : gone) {
                handles.remove(objects.remove(h));
                deviceOf.remove(h);
            }
        }

        /** Closes every device still open (the test JVM went away). */
        void closeDevices() {
            List<RdmaDevice> devices = new ArrayList<>();
            synchronized (this) {
                for (Object o : objects.values()) {
                    if (o instanceof RdmaDevice d) {
                        devices.add(d);
                    }
                }
            }
            for (RdmaDevice d : devices) {
                d.close();
            }
        }
    }
}
