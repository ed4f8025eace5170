package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.ChildJvm;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.QpState;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.ReceiveWorkRequest;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WcOpcode;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 3, acceptance 2: a peer process killed -9 while this side has requests outstanding on a queue
 * pair connected to it. Within 2 s the survivor's queue pair is in ERROR with the oldest outstanding
 * send failed by transport retry ({@code RETRY_EXC_ERR}) and everything else flushed, and the CM
 * reports DISCONNECTED; afterwards the dead process's segment files, listener entries and control
 * socket are gone from the rendezvous directory.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class XpPeerDeathTest {
    private static final long BOUND_MS = 2_000;

    @Test
    void killedPeerFailsOutstandingRequestsAndLeavesNoFiles() throws Exception {
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        try (HostCmSide side = new HostCmSide(device)) {
            Rendezvous r = device.host().node().rendezvous();
            DeviceMemory mem = device.allocateMemory(4096);
            MemoryRegion mr = side.pd.register(mem.buffer(), Access.LOCAL_WRITE);
            try (ChildJvm child = ChildJvm.start(HostCmChild.class, r.directory().toString())) {
                String[] ready = child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ");
                NodeId childNode = NodeId.parse(ready[1]);
                int port = Integer.parseInt(ready[2]);
                CmId id = side.resolved(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
                // The child never posts a receive: with RNR retries forever, our sends stay outstanding.
                id.connect(new ConnectionParameters().rnrRetryCount(7));
                side.expect(CmEventType.ESTABLISHED, 10_000);
                QueuePair qp = id.queuePair();
                for (int i = 0; i < 2; i++) {
                    assertEquals(Errno.OK, qp.postRecv(new ReceiveWorkRequest().wrId(100 + i)
                        .sge(0, mr.address(), 64, mr.lkey())));
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals(Errno.OK, qp.postSend(new SendWorkRequest().wrId(i).opcode(Opcode.SEND)
                        .flags(SendFlags.SIGNALED).sge(0, mr.address() + 64, 32, mr.lkey())));
                }
                WorkCompletion[] wc = {new WorkCompletion()};
                Thread.sleep(50);
                assertEquals(0, side.cq.poll(wc, 1), "nothing completes while the peer lives");
                List<Path> childFiles = filesOf(r, childNode);
                assertTrue(childFiles.stream().anyMatch(p -> p.getFileName().toString().startsWith("seg-")),
                    "the child shares segments: " + childFiles);

                long killedNs = System.nanoTime();
                child.kill();
                CmEvent e = side.next(BOUND_MS);
                long reportedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
                assertNotNull(e, "DISCONNECTED within " + BOUND_MS + " ms of the kill");
                assertEquals(CmEventType.DISCONNECTED, e.type());
                List<WorkCompletion> got = new ArrayList<>();
                long deadline = killedNs + TimeUnit.MILLISECONDS.toNanos(BOUND_MS);
                while (got.size() < 5 && System.nanoTime() < deadline) {
                    if (side.cq.poll(wc, 1) == 1) {
                        WorkCompletion c = new WorkCompletion();
                        WorkCompletion w = wc[0];
                        c.set(w.wrId(), w.status(), w.opcode(), w.byteLen(), w.immData(), w.flags(), w.qpNumber());
                        got.add(c);
                    }
                }
                assertEquals(5, got.size(), "every outstanding request completes within the bound: " + got);
                assertEquals(QpState.ERROR, qp.state());
                List<WorkCompletion> sends = got.stream().filter(c -> c.opcode() == WcOpcode.SEND).toList();
                List<WorkCompletion> recvs = got.stream().filter(c -> c.opcode() == WcOpcode.RECV).toList();
                assertEquals(3, sends.size(), got::toString);
                assertEquals(0, sends.get(0).wrId());
                assertEquals(WcStatus.RETRY_EXC_ERR, sends.get(0).status(), "the oldest fails by transport retry");
                for (int i = 1; i < 3; i++) {
                    assertEquals(i, sends.get(i).wrId());
                    assertEquals(WcStatus.WR_FLUSH_ERR, sends.get(i).status());
                }
                for (WorkCompletion c : recvs) {
                    assertEquals(WcStatus.WR_FLUSH_ERR, c.status());
                }
                System.out.println("peer death: DISCONNECTED " + reportedMs + " ms after kill -9 (includes reaping)");

                // The sweep reclaims what the dead process left in the rendezvous directory.
                long reclaimDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BOUND_MS + 1_000);
                while (!filesOf(r, childNode).isEmpty()) {
                    assertTrue(System.nanoTime() < reclaimDeadline, "left behind: " + filesOf(r, childNode));
                    Thread.sleep(20);
                }
                for (String p : new String[] {ready[2], ready[3], ready[4]}) {
                    assertFalse(r.listenerOwner(Integer.parseInt(p)) != null, "cm-" + p + " still claimed");
                }
                id.disconnect();
            } finally {
                mr.close();
                mem.close();
            }
            assertEquals(0, side.cq.poll(new WorkCompletion[] {new WorkCompletion()}, 1));
        } finally {
            device.close();
        }
    }

    /** The files of the rendezvous directory whose names carry {@code node}'s token. */
    private static List<Path> filesOf(Rendezvous r, NodeId node) throws IOException {
        try (Stream<Path> s = Files.list(r.directory())) {
            return s.filter(p -> p.getFileName().toString().contains(node.token())).toList();
        }
    }
}
