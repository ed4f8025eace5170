package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.testbed.RemoteProtocol.Out;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.ConcurrentModificationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The remote-device proxy itself, beyond what the conformance suites check through it: the wire
 * codec round-trips every field, the proxy refuses memory the peer cannot reach, a call waiting in the
 * peer holds up no other and ends on an interrupt, and a dead peer fails calls at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteProxyTest {
    private static RemotePeer peer;

    @BeforeAll
    static void startPeer() throws Exception {
        peer = RemotePeer.start();
    }

    @AfterAll
    static void stopPeer() {
        if (peer != null) {
            peer.close();
        }
    }

    /** A finished frame read back as its reader sees it: after the length field. */
    private static ByteBuffer readBack(Out out) {
        ByteBuffer frame = out.finish();
        frame.getInt();
        return frame.slice();
    }

    @Test
    void workRequestsCrossTheWireWithEveryField() {
        SendWorkRequest s = new SendWorkRequest(5).wrId(-7L).opcode(Opcode.RDMA_WRITE_WITH_IMM)
            .flags(SendFlags.SIGNALED | SendFlags.FENCE).immData(0xCAFEBABE).remote(0x1234_5678_9ABCL, 0x5a00)
            .sge(0, 100, 10, 1).sge(1, 200, 20, 2).sge(2, 300, 30, 3);
        Out out = new Out();
        RemoteProtocol.putSend(out, s);
        SendWorkRequest t = RemoteProtocol.getSend(readBack(out));
        assertEquals(s.wrId(), t.wrId());
        assertEquals(s.opcode(), t.opcode());
        assertEquals(s.flags(), t.flags());
        assertEquals(s.immData(), t.immData());
        assertEquals(s.remoteAddress(), t.remoteAddress());
        assertEquals(s.rkey(), t.rkey());
        assertEquals(5, t.maxSge());
        assertEquals(3, t.numSge());
        for (int i = 0; i < 3; i++) {
            assertEquals(s.sgeAddress(i), t.sgeAddress(i));
            assertEquals(s.sgeLength(i), t.sgeLength(i));
            assertEquals(s.sgeLkey(i), t.sgeLkey(i));
        }
        ReceiveWorkRequest r = new ReceiveWorkRequest(2).wrId(99).sge(0, 4096, 64, 0x700);
        out = new Out();
        RemoteProtocol.putRecv(out, r);
        ReceiveWorkRequest q = RemoteProtocol.getRecv(readBack(out));
        assertEquals(99, q.wrId());
        assertEquals(2, q.maxSge());
        assertEquals(1, q.numSge());
        assertEquals(4096, q.sgeAddress(0));
        assertEquals(64, q.sgeLength(0));
        assertEquals(0x700, q.sgeLkey(0));
    }

    @Test
    void completionsAttributesParametersAndAddressesCrossTheWire() throws Exception {
        WorkCompletion wc = new WorkCompletion();
        wc.set(42, WcStatus.REM_ACCESS_ERR, WcOpcode.RECV_RDMA_WITH_IMM, 17, 0xBEEF, WorkCompletion.WITH_IMM, 9);
        Out out = new Out();
        RemoteProtocol.putCompletion(out, wc);
        WorkCompletion back = new WorkCompletion();
        RemoteProtocol.getCompletion(readBack(out), back);
        assertEquals(wc.toString(), back.toString());

        QueuePairAttributes a = new QueuePairAttributes().maxSendWr(3).maxRecvWr(5).maxSendSge(2).maxRecvSge(1)
            .maxInlineData(16).signalAll(true).ackTimeoutNs(1234).minRnrTimerNs(5678);
        out = new Out();
        RemoteProtocol.putAttributes(out, a);
        QueuePairAttributes b = RemoteProtocol.getAttributes(readBack(out));
        assertEquals(List.of(3, 5, 2, 1, 16), List.of(b.maxSendWr(), b.maxRecvWr(), b.maxSendSge(), b.maxRecvSge(),
            b.maxInlineData()));
        assertTrue(b.signalAll());
        assertEquals(1234, b.ackTimeoutNs());
        assertEquals(5678, b.minRnrTimerNs());

        ConnectionParameters p = new ConnectionParameters().retryCount(3).rnrRetryCount(7)
            .privateData(new byte[] {1, 2, 3}).connectTimeoutMs(250);
        out = new Out();
        RemoteProtocol.putParameters(out, p);
        ConnectionParameters q = RemoteProtocol.getParameters(readBack(out));
        assertEquals(3, q.retryCount());
        assertEquals(7, q.rnrRetryCount());
        assertArrayEquals(new byte[] {1, 2, 3}, q.privateData());
        assertEquals(250, q.connectTimeoutMs());

        InetSocketAddress resolved = new InetSocketAddress(InetAddress.getByName("192.0.2.1"), 7000);
        InetSocketAddress unresolved = InetSocketAddress.createUnresolved("peer.invalid", 7001);
        out = new Out();
        RemoteProtocol.putAddress(out, resolved);
        RemoteProtocol.putAddress(out, unresolved);
        RemoteProtocol.putAddress(out, null);
        ByteBuffer in = readBack(out);
        assertEquals(resolved, RemoteProtocol.getAddress(in));
        InetSocketAddress u = RemoteProtocol.getAddress(in);
        assertTrue(u.isUnresolved());
        assertEquals("peer.invalid", u.getHostString());
        assertEquals(7001, u.getPort());
        assertNull(RemoteProtocol.getAddress(in));
    }

    @Test
    void exceptionsArriveWithTheirTypeErrnoMessageAndThePeerStack() {
        VerbsException busy = new VerbsException(Errno.EBUSY, "PD 3 still has 1 memory region(s)");
        Throwable t = roundTrip(busy);
        VerbsException v = assertInstanceOf(VerbsException.class, t);
        assertEquals(Errno.EBUSY, v.errno());
        assertEquals(busy.getMessage(), v.getMessage(), "the errno name is appended once");
        assertInstanceOf(RemoteProtocol.PeerStackTrace.class, v.getCause());
        assertEquals(frames(busy), frames(v.getCause()));
        assertTrue(v.getCause().getMessage().contains("peer JVM 4711"), v.getCause().getMessage());

        Throwable iae = roundTrip(new IllegalArgumentException("numSge 9 outside 0..4"));
        assertInstanceOf(IllegalArgumentException.class, iae);
        assertEquals("numSge 9 outside 0..4", iae.getMessage());
        assertInstanceOf(InterruptedException.class, roundTrip(new InterruptedException("woken")));
        Throwable other = roundTrip(new ConcurrentModificationException("odd"));
        assertInstanceOf(IllegalStateException.class, other, "a type without a rebuild is named, not lost");
        assertTrue(other.getMessage().contains(ConcurrentModificationException.class.getName()));
        assertTrue(other.getMessage().contains("odd"));
    }

    private static List<String> frames(Throwable t) {
        return Arrays.stream(t.getStackTrace())
            .map(e -> e.getClassName() + "." + e.getMethodName() + "(" + e.getFileName() + ":" + e.getLineNumber() + ")")
            .toList();
    }

    private static Throwable roundTrip(Throwable t) {
        Out out = new Out();
        RemoteProtocol.putThrowable(out, t);
        return RemoteProtocol.getThrowable(readBack(out), 4711);
    }

    @Test
    void onlyThePeersDeviceMemoryCanBeRegistered() throws Exception {
        RemoteDevice d = peer.openDevice();
        try {
            ProtectionDomain pd = d.allocateProtectionDomain();
            DeviceMemory memory = d.allocateMemory(4096);
            IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class,
                () -> pd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE));
            assertTrue(foreign.getMessage().contains("device memory"), foreign.getMessage());
            assertThrows(IllegalArgumentException.class, () -> pd.register(memory.buffer().slice(), Access.LOCAL_WRITE),
                "a slice is another buffer, which names no memory of the peer");
            VerbsException heap = assertThrows(VerbsException.class,
                () -> pd.register(ByteBuffer.allocate(64), Access.LOCAL_WRITE), "the peer's device refuses heap buffers");
            assertEquals(Errno.EINVAL, heap.errno());
            MemoryRegion mr = pd.register(memory.buffer(), Access.LOCAL_WRITE | Access.REMOTE_READ);
            assertSame(memory.buffer(), mr.buffer());
            assertEquals(4096, mr.length());
            VerbsException inUse = assertThrows(VerbsException.class, pd::close);
            assertEquals(Errno.EBUSY, inUse.errno());
            mr.close();
            memory.close();
            pd.close();
            RemoteDevice.OpenResources open = d.openResources();
            assertEquals(0, open.count(), open.report());
        } finally {
            d.close();
        }
    }

    @Test
    void aCallWaitingInThePeerHoldsUpNoOtherCall() throws Exception {
        RemoteDevice d = peer.openDevice();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CmEventChannel events = d.createEventChannel();
            Future<CmEvent> waiting = pool.submit(() -> events.poll(TimeUnit.SECONDS.toNanos(20)));
            long t0 = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                d.allocateProtectionDomain().close();
            }
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(elapsedMs < 10_000, "calls answered while another waits, took " + elapsedMs + " ms");
            assertFalse(waiting.isDone());
            CmId id = d.createId(events);
            id.resolveAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000), 1000);
            CmEvent e = waiting.get(10, TimeUnit.SECONDS);
            assertEquals(CmEventType.ADDR_RESOLVED, e.type());
            assertSame(id, e.id(), "the event names the id's one proxy");
            id.close();
            events.close();
        } finally {
            pool.shutdownNow();
            d.close();
        }
    }

    @Test
    void interruptEndsAWaitInThePeerWithoutLosingTheConnection() throws Exception {
        RemoteDevice d = peer.openDevice();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CmEventChannel events = d.createEventChannel();
            Future<Long> waited = pool.submit(() -> {
                long t0 = System.nanoTime();
                assertThrows(InterruptedException.class, () -> events.poll(TimeUnit.SECONDS.toNanos(30)));
                assertFalse(Thread.currentThread().isInterrupted(), "reported by the exception, as a local wait does");
                return System.nanoTime() - t0;
            });
            Thread.sleep(200);
            pool.shutdownNow(); // interrupts the waiting thread
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(waited.get(10, TimeUnit.SECONDS));
            assertTrue(waitedMs < 10_000, "the interrupt ended the wait, not its timeout: " + waitedMs + " ms");
            // the peer's wait ended too: the next event goes to the next poll
            CmId id = d.createId(events);
            id.resolveAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000), 1000);
            CmEvent e = events.poll(TimeUnit.SECONDS.toNanos(5));
            assertEquals(CmEventType.ADDR_RESOLVED, e == null ? null : e.type());
            id.close();
            events.close();
        } finally {
            pool.shutdownNow();
            d.close();
        }
    }

    @Test
    void aDeadPeerFailsWaitingAndLaterCallsAtOnce() throws Exception {
        RemotePeer doomed = RemotePeer.start();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            RemoteDevice d = doomed.openDevice();
            CmEventChannel events = d.createEventChannel();
            Future<CmEvent> waiting = pool.submit(() -> events.poll(TimeUnit.SECONDS.toNanos(30)));
            Thread.sleep(200);
            doomed.kill();
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
            assertInstanceOf(RemotePeer.PeerGoneException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("exited"), e.getCause().getMessage());
            long t0 = System.nanoTime();
            assertThrows(RemotePeer.PeerGoneException.class, d::allocateProtectionDomain);
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "fails at once");
            d.close(); // nothing left to close: quiet
            assertFalse(d.isOpen());
        } finally {
            pool.shutdownNow();
            doomed.close();
        }
    }

    @Test
    void resourcesAreThePeersToReport() throws Exception {
        RemoteDevice d = peer.openDevice();
        try {
            assertThrows(UnsupportedOperationException.class, d::resources);
            ProtectionDomain pd = d.allocateProtectionDomain();
            RemoteDevice.OpenResources open = d.openResources();
            assertEquals(1, open.count());
            assertTrue(open.report().contains("PD"), open.report());
            assertTrue(open.report().contains("RemotePeerMain"), "the allocation stack is the peer's: " + open.report());
            pd.close();
            assertEquals(0, d.openResources().count());
            assertEquals("soft", d.provider());
        } finally {
            d.close();
        }
    }
}
