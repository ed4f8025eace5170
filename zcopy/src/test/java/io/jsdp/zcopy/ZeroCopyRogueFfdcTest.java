package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.Failure;
import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.flow.engine.rogue.RoguePeer;
import io.jsdp.flow.wire.Hello;
import io.jsdp.flow.wire.HelloAck;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.flow.wire.SrcAvailHeader;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bad zero-copy input from a raw-verbs peer (issue 9; issue 10's "an FFDC test per failure kind", the
 * bad-rkey kind): each aborts only that connection, as a protocol violation with an FFDC record
 * {@code protocol.NAME} whose summary names the connection and the fault and whose snapshot carries the
 * connection's zero-copy state — and a second connection of the same stack keeps working.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZeroCopyRogueFfdcTest {
    static final long STEP_NS = TimeUnit.SECONDS.toNanos(10);
    static final SdpOptions ENGINE = new SdpOptions().zcopyThreshold(64 * 1024);

    private SoftDevice deviceE;
    private SoftDevice deviceR;
    private SdpStack stackE;
    private ZeroCopy zcE;
    private SdpListener listener;
    private ProtectionDomain pdR;
    private RoguePeer rogue;
    private SdpConnection engine;
    private boolean negotiated;

    @BeforeEach
    void open() throws Exception {
        deviceE = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        deviceR = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        stackE = SdpStack.open(deviceE);
        zcE = ZeroCopy.install(stackE, ZeroCopySettings.fromSystemProperties());
        listener = stackE.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16, ENGINE);
        pdR = deviceR.allocateProtectionDomain();
    }

    @AfterEach
    void close() throws Exception {
        if (rogue != null) {
            rogue.close();
        }
        listener.close();
        stackE.close();
        pdR.close();
        String leaks = deviceE.resources().checkLeaks();
        deviceE.close();
        deviceR.close();
        assertTrue(leaks == null || leaks.isEmpty(), "engine device leaks: " + leaks);
        assertEquals(0, zcE.registrations(), zcE.describe());
    }

    /** The rogue connects and offers zero copy in its Hello; the engine accepts it. */
    private void connectRogue(boolean offerZcopy) throws Exception {
        rogue = RoguePeer.connect(pdR, listener.localAddress(), new RoguePeer.Options());
        ByteBuffer hello = rogue.hello();
        if (offerZcopy) {
            hello.putInt(Hello.CAPABILITIES_OFFSET, LargeTransfers.CAPABILITY_ZCOPY);
        }
        rogue.sendValid(hello);
        RoguePeer.Message ack = rogue.receive(STEP_NS);
        assertNotNull(ack);
        assertEquals(MessageId.HELLO_ACK, ack.mid());
        int caps = ByteBuffer.wrap(ack.bytes()).order(ByteOrder.BIG_ENDIAN).getInt(HelloAck.CAPABILITIES_OFFSET);
        assertEquals(offerZcopy ? LargeTransfers.CAPABILITY_ZCOPY : 0, caps, "negotiated capabilities");
        engine = listener.accept(STEP_NS);
        assertNotNull(engine);
        negotiated = offerZcopy;
    }

    private ByteBuffer srcAvail(long len, int rkey, long vaddr, int inline) {
        byte[] payload = new byte[SrcAvailHeader.LENGTH + inline];
        ByteBuffer p = ByteBuffer.wrap(payload).order(ByteOrder.BIG_ENDIAN);
        p.putInt(0, (int) len).putInt(4, rkey).putLong(8, vaddr);
        for (int i = 0; i < inline; i++) {
            payload[SrcAvailHeader.LENGTH + i] = Zio.at(i);
        }
        return rogue.frame(MessageId.SRC_AVAIL, payload);
    }

    /** The engine's reader ends with FAILED after the inline bytes; the record says why. */
    private FfdcRecord expectViolation(Violation v, boolean read) throws Exception {
        if (read) {
            ByteBuffer dst = ByteBuffer.allocateDirect(256 * 1024);
            int n;
            do {
                n = engine.read(dst);
                if (n == 0) {
                    engine.await(SdpConnection.OP_READ, STEP_NS);
                }
            } while (n >= 0);
            assertEquals(SdpConnection.FAILED, n, engine.snapshot());
            Zio.check(dst, 0, dst.position(), 0); // the inline bytes that came first are the stream's
        } else {
            assertTrue(engine.await(SdpConnection.OP_ENDED, STEP_NS) != 0, engine.snapshot());
        }
        assertEquals(SdpConnection.State.FAILED, engine.state());
        assertEquals(Failure.PROTOCOL_VIOLATION, engine.failure(), engine.failureDetail());
        assertTrue(engine.failureDetail().contains(v.name()), engine.failureDetail());
        String prefix = "connection " + engine.id() + " ";
        List<FfdcRecord> records = Ffdc.find("protocol." + v.name(), prefix);
        assertEquals(1, records.size(), "one FFDC record protocol." + v + " for connection " + engine.id());
        FfdcRecord r = records.get(0);
        assertEquals("sdp", r.component());
        assertEquals("protocol." + v.name(), r.kind());
        assertTrue(r.summary().startsWith(prefix) && r.summary().contains("PROTOCOL_VIOLATION") && r.summary().contains(v.name()),
            r.summary());
        assertTrue(r.snapshot().contains("connection " + engine.id()), r.snapshot());
        assertEquals(negotiated, r.snapshot().contains("zcopy source "), "the snapshot shows the zero-copy state: " + r.snapshot());
        assertTrue(rogue.awaitAbort(STEP_NS), "the rogue saw no abort: " + rogue.describeEnd());
        assertTrue(engine.awaitReleased(STEP_NS));
        assertOtherConnectionsUnharmed();
        return r;
    }

    /** A zero-copy transfer between the engine's stack and a healthy peer still works afterwards. */
    private void assertOtherConnectionsUnharmed() throws Exception {
        SoftDevice deviceH = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        try (SdpStack stackH = SdpStack.open(deviceH)) {
            ZeroCopy zcH = ZeroCopy.install(stackH, ZeroCopySettings.fromSystemProperties());
            SdpConnection h = stackH.connect(listener.localAddress(), ENGINE);
            assertTrue(h.awaitConnected(STEP_NS), h.failureDetail());
            SdpConnection e = listener.accept(STEP_NS);
            ByteBuffer src = zcH.allocateDirect(256 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            Future<?> w = TestThreads.POOL.submit(() -> {
                Zio.writeFully(h, src);
                return null;
            });
            ByteBuffer dst = ByteBuffer.allocateDirect(256 * 1024);
            Zio.readFully(e, dst);
            w.get(30, TimeUnit.SECONDS);
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(1, h.stats().zeroCopyTransfers(), h.snapshot());
            e.abort();
            h.abort();
            assertTrue(e.awaitReleased(STEP_NS) && h.awaitReleased(STEP_NS));
        } finally {
            deviceH.close();
        }
    }

    @Test
    void abortsConnectionOnSrcAvailWithBadRkeyAndRecordsFfdc() throws Exception {
        connectRogue(true);
        rogue.sendValid(srcAvail(128 * 1024, 0x7bad_0001, 0x1000, 100));
        FfdcRecord r = expectViolation(Violation.BAD_SRC_AVAIL, true);
        assertTrue(r.summary().contains("rkey 0x7bad0001") && r.summary().contains("REM_ACCESS_ERR"), r.summary());
    }

    @Test
    void abortsConnectionOnSrcAvailBeyondItsRegionAndRecordsFfdc() throws Exception {
        connectRogue(true);
        DeviceMemory m = deviceR.allocateMemory(8192);
        MemoryRegion mr = pdR.register(m.buffer(), Access.LOCAL_WRITE | Access.REMOTE_READ);
        try {
            // a real key, but 128 KiB advertised over an 8 KiB region: the READ runs off its end
            rogue.sendValid(srcAvail(128 * 1024, mr.rkey(), mr.address(), 100));
            FfdcRecord r = expectViolation(Violation.BAD_SRC_AVAIL, true);
            assertTrue(r.summary().contains("len 131072") && r.summary().contains("REM_ACCESS_ERR"), r.summary());
        } finally {
            rogue.close();
            rogue = null;
            mr.close();
            m.close();
        }
    }

    @Test
    void abortsConnectionOnSrcAvailWithMoreInlineThanAdvertisedAndRecordsFfdc() throws Exception {
        connectRogue(true);
        rogue.sendValid(srcAvail(50, 0x1234, 0x1000, 100));
        FfdcRecord r = expectViolation(Violation.BAD_SRC_AVAIL, false);
        assertTrue(r.summary().contains("100 inline bytes but advertises 50"), r.summary());
    }

    @Test
    void abortsConnectionOnMoreOutstandingSrcAvailsThanMaxAdvertsAndRecordsFfdc() throws Exception {
        connectRogue(true);
        int max = zcE.maxAdverts();
        for (int i = 0; i <= max; i++) {
            rogue.sendValid(srcAvail(128 * 1024, 0x1234, 0x1000, 100));
        }
        FfdcRecord r = expectViolation(Violation.TOO_MANY_ADVERTS, false);
        assertTrue(r.summary().contains("max_adverts " + max), r.summary());
    }

    @Test
    void abortsConnectionOnRdmaRdComplForMoreThanAdvertisedAndRecordsFfdc() throws Exception {
        connectRogue(true);
        ByteBuffer src = zcE.allocateDirect(128 * 1024);
        Future<?> w = TestThreads.POOL.submit(() -> {
            Zio.writeFully(engine, src);
            return null;
        });
        RoguePeer.Message adv = rogue.receiveSkippingCreditUpdates(STEP_NS);
        assertNotNull(adv);
        assertEquals(MessageId.SRC_AVAIL, adv.mid(), "the engine advertised its device buffer: " + adv);
        long len = ByteBuffer.wrap(adv.bytes()).order(ByteOrder.BIG_ENDIAN).getInt(SrcAvailHeader.LEN_OFFSET) & 0xFFFF_FFFFL;
        assertEquals(128 * 1024, len);
        byte[] size = ByteBuffer.allocate(4).putInt((int) len + 1).array(); // more than it advertised
        rogue.sendValid(rogue.frame(MessageId.RDMA_RD_COMPL, size));
        FfdcRecord r = expectViolation(Violation.RD_COMPL_OVERRUN, false);
        assertTrue(r.summary().contains("131073 bytes") && r.summary().contains("131072 advertised"), r.summary());
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
            () -> w.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IOException, e.toString());
    }

    /**
     * A SrcAvail gives the peer a key to read the writer's buffer, never to write it: a rogue that
     * RDMA-WRITEs with that key is refused by the device, and the buffer keeps its bytes (review of
     * issue 9, finding 11: every device buffer used to be registered for remote write too, and the
     * cache kept the registration).
     */
    @Test
    void aPeerCannotWriteIntoABufferItWasGivenOnlyToRead() throws Exception {
        connectRogue(true);
        ByteBuffer src = zcE.allocateDirect(128 * 1024);
        Zio.fill(src, 0, src.capacity(), 0);
        Future<?> w = TestThreads.POOL.submit(() -> {
            Zio.writeFully(engine, src);
            return null;
        });
        RoguePeer.Message adv = rogue.receiveSkippingCreditUpdates(STEP_NS);
        assertNotNull(adv);
        assertEquals(MessageId.SRC_AVAIL, adv.mid(), "the engine advertised its device buffer: " + adv);
        ByteBuffer m = ByteBuffer.wrap(adv.bytes()).order(ByteOrder.BIG_ENDIAN);
        int rkey = m.getInt(SrcAvailHeader.RKEY_OFFSET);
        long vaddr = m.getLong(SrcAvailHeader.VADDR_OFFSET);
        byte[] evil = new byte[4096];
        java.util.Arrays.fill(evil, (byte) 0x5A);
        io.jsdp.verbs.WcStatus st = rogue.rdmaWrite(vaddr, rkey, evil);
        assertEquals(io.jsdp.verbs.WcStatus.REM_ACCESS_ERR, st, "an RDMA WRITE with a SrcAvail's rkey");
        Zio.check(src, 0, src.capacity(), 0); // not one byte changed
        engine.abort();
        org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> w.get(30, TimeUnit.SECONDS));
        assertTrue(engine.awaitReleased(STEP_NS));
        zcE.free(src);
    }

    @Test
    void abortsConnectionOnRdmaRdComplWithNothingAdvertisedAndRecordsFfdc() throws Exception {
        connectRogue(true);
        rogue.sendValid(rogue.frame(MessageId.RDMA_RD_COMPL, new byte[] {0, 0, 16, 0}));
        FfdcRecord r = expectViolation(Violation.RD_COMPL_OVERRUN, false);
        assertTrue(r.summary().contains("no SrcAvail outstanding"), r.summary());
    }

    @Test
    void abortsConnectionOnSrcAvailFromAPeerThatDidNotNegotiateZeroCopyAndRecordsFfdc() throws Exception {
        connectRogue(false);
        rogue.sendValid(srcAvail(128 * 1024, 0x1234, 0x1000, 100));
        FfdcRecord r = expectViolation(Violation.UNSUPPORTED_MID, false);
        assertTrue(r.summary().contains("zero copy not negotiated"), r.summary());
    }
}
