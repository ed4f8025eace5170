package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.ibm.disni.verbs.RdmaProvider;
import io.jsdp.testbed.disni.SoftDisni;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The adapter over DiSNI's traps, through the chain (the shim reproduces them as libdisni has them). */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class DisniChainTrapsTest {
    private DisniDevice a;
    private DisniDevice b;
    private Connection c;

    @BeforeEach
    void open() throws Exception {
        a = DisniChain.open();
        b = DisniChain.open();
    }

    @AfterEach
    void close() {
        try {
            if (c != null) {
                c.close();
            }
            assertEquals(0, DisniChain.soft().resources().openCount(), () -> DisniChain.soft().resources().report());
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void queuesLeavingAChannelWhileItsProgressThreadWaitsDoNotDisturbTheWait() throws Exception {
        // a stack's progress thread waits on the channel while connections close on other threads; a queue
        // leaving between the waiter's count and its look once threw IndexOutOfBounds and killed the thread
        CompletionChannel ch = a.createCompletionChannel();
        CompletionQueue keep = a.createCompletionQueue(ch, 16);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            try {
                while (!stop.get()) {
                    ch.await(TimeUnit.MICROSECONDS.toNanos(200));
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "waiter");
        waiter.start();
        try {
            for (int i = 0; i < 1000 && failed.get() == null; i++) {
                CompletionQueue[] more = new CompletionQueue[1 + i % 3];
                for (int j = 0; j < more.length; j++) {
                    more[j] = a.createCompletionQueue(ch, 16);
                }
                Thread.sleep(0, 200_000);
                for (CompletionQueue q : more) {
                    q.close();
                }
            }
        } finally {
            stop.set(true);
            waiter.join();
            keep.close();
            ch.close();
        }
        assertNull(failed.get(), () -> "the wait failed: " + failed.get());
    }

    @Test
    void theChainRunsDisnisOwnClassesOverTheShim() throws Exception {
        assertSame(SoftDisni.installed(), RdmaProvider.provider());
        assertEquals("io.jsdp.testbed.disni", a.cm.getClass().getPackageName(), "DiSNI's RdmaCm is the shim's");
        assertEquals("io.jsdp.testbed.disni", a.context.getClass().getPackageName());
    }

    @Test
    void errorCompletionNamesItsQueuePairAndNotTheByteCountLeftInTheReusedSlot() throws Exception {
        c = Connection.open(a, b, new Connection.Options());
        // a successful 8-byte READ leaves byte_len 8 in the queue's reused IbvWC; the shim, as libdisni, does
        // not overwrite it for the error completion that follows
        assertEquals(Errno.OK, c.rdma(c.qpA, 2, Opcode.RDMA_READ, SendFlags.SIGNALED, c.mrA, 0, 8, c.mrB.address(),
            c.mrB.rkey()));
        assertEquals(8, c.poll(c.cqA).byteLen());
        assertEquals(Errno.OK, c.rdma(c.qpA, 3, Opcode.RDMA_WRITE, SendFlags.SIGNALED, c.mrA, 0, 8, c.mrB.address(), 0x4242));
        WorkCompletion w = c.poll(c.cqA);
        assertEquals(WcStatus.REM_ACCESS_ERR, w.status());
        assertEquals(3, w.wrId());
        assertEquals(0, w.byteLen());
        assertEquals(c.qpA.qpNumber(), w.qpNumber(), "the queue's only queue pair");
        assertEquals(QpState.ERROR, c.qpA.state(), "learnt from the completion: DiSNI cannot query the queue pair");
    }

    @Test
    void signalAllIsKeptByTheAdapterThoughLibdisniDropsSqSigAll() throws Exception {
        Connection.Options o = new Connection.Options();
        o.attrsA().signalAll(true);
        c = Connection.open(a, b, o);
        assertEquals(Errno.OK, c.rdma(c.qpA, 5, Opcode.RDMA_WRITE, 0, c.mrA, 0, 8, c.mrB.address(), c.mrB.rkey()));
        assertEquals(5, c.poll(c.cqA).wrId(), "an unsignaled request of a signal-all queue pair completes");
    }

    @Test
    void cachedCallObjectsPostEachRequestsOwnValues() throws Exception {
        c = Connection.open(a, b, new Connection.Options());
        // the same send call object (SEND, one SGE) is modified and re-executed for every post
        for (int i = 0; i < 3; i++) {
            assertEquals(Errno.OK, c.recv(c.qpB, 10 + i, c.mrB, 100 * i, 64));
        }
        for (int i = 0; i < 3; i++) {
            c.mrA.buffer().put(i * 10, (byte) (i + 1));
            assertEquals(Errno.OK, c.send(c.qpA, 20 + i, Opcode.SEND, SendFlags.SIGNALED, c.mrA, i * 10, 1 + i));
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(20 + i, c.poll(c.cqA).wrId());
            WorkCompletion r = c.poll(c.cqB);
            assertEquals(10 + i, r.wrId());
            assertEquals(1 + i, r.byteLen());
            assertEquals(i + 1, c.mrB.buffer().get(100 * i));
        }
        // immediates cannot be changed in a DiSNI call object: a new value must still arrive
        for (int imm : new int[] {7, 8}) {
            assertEquals(Errno.OK, c.recv(c.qpB, 30, c.mrB, 0, 64));
            SendWorkRequest wr = new SendWorkRequest().wrId(imm).opcode(Opcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                .immData(imm).sge(0, c.mrA.address(), 4, c.mrA.lkey());
            assertEquals(Errno.OK, c.qpA.postSend(wr));
            assertEquals(imm, c.poll(c.cqA).wrId());
            assertEquals(imm, c.poll(c.cqB).immData());
        }
        // a receive reposted with the same wr_id but another buffer is not the cached one
        ReceiveWorkRequest rr = new ReceiveWorkRequest().wrId(40).sge(0, c.mrB.address() + 512, 64, c.mrB.lkey());
        assertEquals(Errno.OK, c.qpB.postRecv(rr));
        c.mrA.buffer().put(0, (byte) 99);
        assertEquals(Errno.OK, c.send(c.qpA, 41, Opcode.SEND, SendFlags.SIGNALED, c.mrA, 0, 1));
        c.poll(c.cqA);
        assertEquals(40, c.poll(c.cqB).wrId());
        assertEquals(99, c.mrB.buffer().get(512));
    }

    @Test
    void fiveScatterGatherEntriesAreRefusedAtCreation() throws Exception {
        c = Connection.prepare(a, b, new Connection.Options());
        var id = a.createId(c.evA);
        try {
            VerbsException e = assertThrows(VerbsException.class, () -> id.createQueuePair(c.pdA,
                new QueuePairAttributes().sendCq(c.cqA).recvCq(c.cqA).maxSendSge(5)));
            assertEquals(Errno.EINVAL, e.errno());
        } finally {
            id.close();
        }
    }

    @Test
    void ipv6AddressesAreRefused() throws Exception {
        c = Connection.prepare(a, b, new Connection.Options());
        var id = a.createId(c.evA);
        try {
            VerbsException e = assertThrows(VerbsException.class,
                () -> id.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByName("::1"), 0)));
            assertEquals(Errno.EINVAL, e.errno());
        } finally {
            id.close();
        }
    }
}
