package io.jsdp.zcopy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import io.jsdp.flow.wire.SinkAvailHeader;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
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
 * Bad SinkAvail input from a raw-verbs peer (issue 9; {@code docs/protocol.md} section 9): each rule a
 * peer can break aborts only that connection with an FFDC record {@code protocol.NAME} (or
 * {@code zcopy.CANCEL_TIMEOUT}) naming the connection and the fault, the snapshot showing the SinkAvail
 * state — and a second connection of the same stack still moves data by SinkAvail afterwards.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SinkAvailRogueFfdcTest {
    static final long STEP_NS = TimeUnit.SECONDS.toNanos(10);
    static final int THRESHOLD = 64 * 1024;
    static final SdpOptions ENGINE = new SdpOptions().zcopyThreshold(THRESHOLD);
    static final int BOTH = LargeTransfers.CAPABILITY_ZCOPY | LargeTransfers.CAPABILITY_SINK_AVAIL;

    private SoftDevice deviceE;
    private SoftDevice deviceR;
    private SdpStack stackE;
    private ZeroCopy zcE;
    private SdpListener listener;
    private ProtectionDomain pdR;
    private RoguePeer rogue;
    private SdpConnection engine;
    /** The key and address of the last SinkAvail {@link #engineReaderAdvertises} saw. */
    private int advertisedRkey;
    private long advertisedAddress;

    @BeforeEach
    void open() throws Exception {
        deviceE = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        deviceR = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        stackE = SdpStack.open(deviceE);
        zcE = ZeroCopy.install(stackE, ZeroCopySettings.fromSystemProperties().withTimeoutsMs(1_000, 300, 10_000));
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

    /** The rogue connects offering {@code caps}; the engine answers with the same bits. */
    private void connectRogue(int caps) throws Exception {
        connectRogue(caps, new RoguePeer.Options());
    }

    private void connectRogue(int caps, RoguePeer.Options options) throws Exception {
        rogue = RoguePeer.connect(pdR, listener.localAddress(), options);
        ByteBuffer hello = rogue.hello();
        hello.putInt(Hello.CAPABILITIES_OFFSET, caps);
        rogue.sendValid(hello);
        RoguePeer.Message ack = rogue.receive(STEP_NS);
        assertNotNull(ack);
        assertEquals(MessageId.HELLO_ACK, ack.mid());
        int answered = ByteBuffer.wrap(ack.bytes()).order(ByteOrder.BIG_ENDIAN).getInt(HelloAck.CAPABILITIES_OFFSET);
        assertEquals(caps == LargeTransfers.CAPABILITY_SINK_AVAIL ? 0 : caps, answered, "negotiated capabilities");
        engine = listener.accept(STEP_NS);
        assertNotNull(engine);
    }

    private ByteBuffer sinkAvail(long size, int rkey, long addr, int nonDisc) {
        byte[] payload = new byte[SinkAvailHeader.LENGTH];
        ByteBuffer.wrap(payload).order(ByteOrder.BIG_ENDIAN).putInt(0, (int) size).putInt(4, rkey).putLong(8, addr)
            .putInt(16, nonDisc);
        return rogue.frame(MessageId.SINK_AVAIL, payload);
    }

    private ByteBuffer rdmaWrCompl(long size) {
        return rogue.frame(MessageId.RDMA_WR_COMPL, ByteBuffer.allocate(4).putInt((int) size).array());
    }

    /** The engine's blocked reader advertises a device buffer; returns the reader and the SinkAvail's size. */
    private Future<Integer> engineReaderAdvertises(ByteBuffer dst) throws Exception {
        Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(engine, dst));
        RoguePeer.Message adv = rogue.receiveSkippingCreditUpdates(STEP_NS);
        assertNotNull(adv);
        assertEquals(MessageId.SINK_AVAIL, adv.mid(), "the engine advertised its reader's buffer: " + adv);
        ByteBuffer m = ByteBuffer.wrap(adv.bytes()).order(ByteOrder.BIG_ENDIAN);
        assertEquals(dst.remaining(), m.getInt(SinkAvailHeader.SIZE_OFFSET));
        assertEquals(0, m.getInt(SinkAvailHeader.NON_DISC_OFFSET), "nothing received yet");
        advertisedRkey = m.getInt(SinkAvailHeader.RKEY_OFFSET);
        advertisedAddress = m.getLong(SinkAvailHeader.ADDR_OFFSET);
        return r;
    }

    private FfdcRecord expectFailure(String kind, Failure failure, String inSummary) throws Exception {
        assertTrue(engine.await(SdpConnection.OP_ENDED, STEP_NS) != 0, engine.snapshot());
        assertEquals(SdpConnection.State.FAILED, engine.state());
        assertEquals(failure, engine.failure(), engine.failureDetail());
        String prefix = "connection " + engine.id() + " ";
        List<FfdcRecord> records = Ffdc.find(kind, prefix);
        assertEquals(1, records.size(), "one FFDC record " + kind + " for connection " + engine.id());
        FfdcRecord r = records.get(0);
        assertEquals("sdp", r.component());
        assertEquals(kind, r.kind());
        assertTrue(r.summary().startsWith(prefix) && r.summary().contains(failure.name()) && r.summary().contains(inSummary),
            r.summary());
        assertTrue(r.snapshot().contains("connection " + engine.id()), r.snapshot());
        assertTrue(rogue.awaitAbort(STEP_NS), "the rogue saw no abort: " + rogue.describeEnd());
        assertTrue(engine.awaitReleased(STEP_NS));
        assertOtherConnectionsUnharmed();
        return r;
    }

    private FfdcRecord expectViolation(Violation v, String inSummary) throws Exception {
        FfdcRecord r = expectFailure("protocol." + v.name(), Failure.PROTOCOL_VIOLATION, inSummary);
        assertTrue(r.summary().contains(v.name()), r.summary());
        return r;
    }

    /** A SinkAvail transfer between the engine's stack and a healthy peer still works afterwards. */
    private void assertOtherConnectionsUnharmed() throws Exception {
        SoftDevice deviceH = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        try (SdpStack stackH = SdpStack.open(deviceH)) {
            ZeroCopy.install(stackH, ZeroCopySettings.fromSystemProperties());
            SdpConnection h = stackH.connect(listener.localAddress(), ENGINE);
            assertTrue(h.awaitConnected(STEP_NS), h.failureDetail());
            SdpConnection e = listener.accept(STEP_NS);
            ByteBuffer dst = zcE.allocateDirect(256 * 1024);
            Future<Integer> r = TestThreads.POOL.submit(() -> Zio.readHolding(e, dst));
            long deadline = System.nanoTime() + STEP_NS;
            while (SinkAvailTransferTest.count(h.snapshot(), "peerAdverts") != 1) {
                assertTrue(System.nanoTime() < deadline, h.snapshot());
                Thread.sleep(1);
            }
            ByteBuffer src = ByteBuffer.allocateDirect(256 * 1024);
            Zio.fill(src, 0, src.capacity(), 0);
            Zio.writeFully(h, src);
            assertEquals(256 * 1024, r.get(30, TimeUnit.SECONDS).intValue());
            Zio.check(dst, 0, dst.capacity(), 0);
            assertEquals(1, h.stats().zeroCopyTransfers(), h.snapshot());
            zcE.free(dst);
            e.abort();
            h.abort();
            assertTrue(e.awaitReleased(STEP_NS) && h.awaitReleased(STEP_NS));
        } finally {
            deviceH.close();
        }
    }

    @Test
    void abortsConnectionOnRdmaWrComplWithNothingAdvertisedAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        rogue.sendValid(rdmaWrCompl(4096));
        FfdcRecord r = expectViolation(Violation.WR_COMPL_OVERRUN, "no SinkAvail outstanding");
        assertTrue(r.snapshot().contains("sinkAvail reader"), r.snapshot());
    }

    @Test
    void abortsConnectionOnRdmaWrComplOfZeroOrTooManyBytesAndRecordsFfdc() throws Exception {
        for (long size : new long[] {0, 128 * 1024 + 1}) {
            connectRogue(BOTH);
            ByteBuffer dst = zcE.allocateDirect(128 * 1024);
            Future<Integer> reader = engineReaderAdvertises(dst);
            rogue.sendValid(rdmaWrCompl(size));
            FfdcRecord r = expectViolation(Violation.WR_COMPL_OVERRUN, "RdmaWrCompl of " + size + " bytes for a SinkAvail of 131072");
            assertTrue(r.snapshot().contains("sinkAvail reader ADVERTISED 131072"), r.snapshot());
            ExecutionException e = assertThrows(ExecutionException.class, () -> reader.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof IOException, e.toString());
            assertEquals(0, zcE.cacheStats().inUse(), zcE.describe());
            zcE.free(dst);
            rogue.close();
            rogue = null;
        }
    }

    @Test
    void abortsConnectionOnSinkCancelAckWithoutCancelAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        rogue.sendValid(rogue.frame(MessageId.SINK_CANCEL_ACK, new byte[0]));
        expectViolation(Violation.CANCEL_ACK_WITHOUT_CANCEL, "no SinkAvailCancel outstanding");
    }

    @Test
    void abortsConnectionOnSinkAvailOfZeroBytesAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        rogue.sendValid(sinkAvail(0, 0x1234, 0x1000, 0));
        expectViolation(Violation.BAD_SINK_AVAIL, "SinkAvail of 0 bytes");
    }

    @Test
    void abortsConnectionOnSinkAvailCountingMessagesNeverSentAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        rogue.sendValid(sinkAvail(65536, 0x1234, 0x1000, 3));
        expectViolation(Violation.BAD_SINK_AVAIL, "non_disc 3 (stream messages sent: 0)");
    }

    @Test
    void abortsConnectionOnASinkAvailShorterThanItsHeaderAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        rogue.sendValid(rogue.frame(MessageId.SINK_AVAIL, new byte[12]));
        expectViolation(Violation.BAD_SINK_AVAIL, "with 12 bytes after the BSDH");
    }

    @Test
    void abortsConnectionOnMorePendingSinkAvailsThanMaxAdvertsAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        int max = zcE.maxAdverts();
        for (int i = 0; i <= max; i++) {
            rogue.sendValid(sinkAvail(65536, 0x1234, 0x1000 + i * 65536L, 0));
        }
        expectViolation(Violation.TOO_MANY_ADVERTS, "max_adverts " + max);
    }

    @Test
    void abortsConnectionWhenTheRdmaWriteIntoASinkAvailFailsAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        rogue.sendValid(sinkAvail(65536, 0x7bad_0002, 0x1000, 0));
        ByteBuffer src = ByteBuffer.allocateDirect(65536);
        Future<?> w = TestThreads.POOL.submit(() -> {
            Zio.writeFully(engine, src);
            return null;
        });
        FfdcRecord r = expectViolation(Violation.BAD_SINK_AVAIL, "rkey 0x7bad0002");
        assertTrue(r.summary().contains("RDMA WRITE of 65536 bytes") && r.summary().contains("REM_ACCESS_ERR"), r.summary());
        ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IOException, e.toString());
        assertEquals(0, zcE.cacheStats().inUse(), zcE.describe());
    }

    @Test
    void resetsWhenTheSinkAvailCancelIsNotAnsweredAndRecordsFfdc() throws Exception {
        connectRogue(BOTH);
        ByteBuffer dst = zcE.allocateDirect(128 * 1024);
        Future<Integer> reader = TestThreads.POOL.submit(() -> Zio.readHolding(engine, dst, TimeUnit.MILLISECONDS.toNanos(100)));
        RoguePeer.Message adv = rogue.receiveSkippingCreditUpdates(STEP_NS);
        assertEquals(MessageId.SINK_AVAIL, adv.mid(), "advertised: " + adv);
        RoguePeer.Message cancel = rogue.receiveSkippingCreditUpdates(STEP_NS);
        assertEquals(MessageId.SINK_AVAIL_CANCEL, cancel.mid(), "the reader timed out and withdraws: " + cancel);
        // the rogue never answers: after jsdp.zcopy.cancelTimeoutMs (300 ms here) the engine resets
        FfdcRecord r = expectFailure("zcopy.CANCEL_TIMEOUT", Failure.DEVICE_ERROR, "no SinkCancelAck or RdmaWrCompl within 300 ms");
        assertTrue(r.snapshot().contains("sinkCancels=1"), r.snapshot());
        ExecutionException e = assertThrows(ExecutionException.class, () -> reader.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IOException, "the reader did not leave before the reset: " + e);
        assertEquals(0, zcE.cacheStats().inUse(), zcE.describe());
    }

    /**
     * The rogue gives the engine two credits and never returns any: the SinkAvail takes them, so the
     * SinkAvailCancel of the reader that times out can never go. The cancel timer runs from when the
     * cancel fell due, so the reader's wait ends with a reset after {@code jsdp.zcopy.cancelTimeoutMs}
     * instead of lasting for ever (review of issue 9, finding 6).
     */
    @Test
    void resetsWhenNoCreditLetsTheSinkAvailCancelGoAndRecordsFfdc() throws Exception {
        connectRogue(BOTH, new RoguePeer.Options().receiveBuffers(3));
        ByteBuffer dst = zcE.allocateDirect(128 * 1024);
        Future<Integer> reader = TestThreads.POOL.submit(() -> Zio.readHolding(engine, dst, TimeUnit.MILLISECONDS.toNanos(100)));
        RoguePeer.Message adv = rogue.receiveSkippingCreditUpdates(STEP_NS);
        assertNotNull(adv);
        assertEquals(MessageId.SINK_AVAIL, adv.mid(), "advertised: " + adv);
        FfdcRecord r = expectFailure("zcopy.CANCEL_TIMEOUT", Failure.DEVICE_ERROR, "no SinkCancelAck or RdmaWrCompl within 300 ms");
        assertTrue(r.summary().contains("which no credit let go"), r.summary());
        assertTrue(r.snapshot().contains("sinkCancels=0"), "the cancel never went: " + r.snapshot());
        ExecutionException e = assertThrows(ExecutionException.class, () -> reader.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IOException, "the reader did not leave before the reset: " + e);
        assertEquals(0, zcE.cacheStats().inUse(), zcE.describe());
        zcE.free(dst);
    }

    /**
     * A SinkAvail's registration (remote write) ends with its advertisement: once the read returned,
     * a peer that kept the rkey can no longer write into the buffer, which the application may be
     * using for anything by then (review of issue 9, finding 11).
     */
    @Test
    void aSinkAvailsRkeyDiesWithItsAdvertisement() throws Exception {
        connectRogue(BOTH);
        ByteBuffer dst = zcE.allocateDirect(128 * 1024);
        Future<Integer> reader = engineReaderAdvertises(dst);
        assertEquals(1, zcE.remoteWriteRegistrations(), zcE.describe());
        long addr = advertisedAddress;
        int rkey = advertisedRkey;
        byte[] bytes = new byte[4096];
        java.util.Arrays.fill(bytes, (byte) 7);
        assertEquals(io.jsdp.verbs.WcStatus.SUCCESS, rogue.rdmaWrite(addr, rkey, bytes), "the advertised write");
        rogue.sendValid(rdmaWrCompl(bytes.length));
        assertEquals(bytes.length, reader.get(30, TimeUnit.SECONDS).intValue());
        assertEquals(0, zcE.remoteWriteRegistrations(), "no remote-write registration outlives its advertisement: "
            + zcE.describe());
        for (int i = 0; i < dst.capacity(); i++) {
            dst.put(i, (byte) 1); // the application's own use of its buffer
        }
        assertTrue(rogue.rdmaWrite(addr, rkey, bytes) != io.jsdp.verbs.WcStatus.SUCCESS, "a write with the old rkey");
        for (int i = 0; i < dst.capacity(); i++) {
            assertEquals((byte) 1, dst.get(i), "byte " + i + " written with a dead rkey");
        }
        engine.abort();
        assertTrue(engine.awaitReleased(STEP_NS));
        zcE.free(dst);
    }

    @Test
    void sinkAvailMessagesFromAPeerThatDidNotNegotiateThemAreUnsupported() throws Exception {
        int[] mids = {MessageId.SINK_AVAIL, MessageId.RDMA_WR_COMPL, MessageId.SINK_AVAIL_CANCEL, MessageId.SINK_CANCEL_ACK};
        for (int caps : new int[] {LargeTransfers.CAPABILITY_ZCOPY, LargeTransfers.CAPABILITY_SINK_AVAIL}) {
            for (int mid : mids) {
                connectRogue(caps); // SrcAvail only, or the SinkAvail bit alone (meaningless: not negotiated)
                byte[] payload = mid == MessageId.SINK_AVAIL ? new byte[SinkAvailHeader.LENGTH]
                    : mid == MessageId.RDMA_WR_COMPL ? new byte[] {0, 0, 16, 0} : new byte[0];
                rogue.sendValid(rogue.frame(mid, payload));
                expectViolation(Violation.UNSUPPORTED_MID, "not negotiated");
                rogue.close();
                rogue = null;
            }
        }
    }

    @Test
    void theEngineNeverSendsSinkAvailToAPeerWithoutTheBit() throws Exception {
        connectRogue(LargeTransfers.CAPABILITY_ZCOPY);
        ByteBuffer dst = zcE.allocateDirect(128 * 1024);
        assertEquals(0, Zio.readHolding(engine, dst, TimeUnit.MILLISECONDS.toNanos(100)), "nothing to read");
        RoguePeer.Message m = rogue.receiveSkippingCreditUpdates(TimeUnit.MILLISECONDS.toNanos(200));
        assertTrue(m == null, "the engine sent " + m);
        assertTrue(!engine.snapshot().contains("sinkAvail"), engine.snapshot());
        zcE.free(dst);
        engine.abort();
    }
}
