package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.NodeId;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The host-wide port space of host-fabric devices: a bound port is claimed in the rendezvous directory
 * ({@code cm-<port>}) for this process and released on close; a port another live process holds is in
 * use; a dead process's claim is taken over; a connect to a port nobody (alive) holds is refused at once.
 * Other processes are stood in for by claims in their names.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostCmPortClaimTest {
    /** Generous bound on "at once": a refusal involves no timer, only a file read. */
    private static final long PROMPT_MS = 1_000;

    private SoftDevice host;
    private SoftDevice jvm;
    private HostCmSide side;
    private Rendezvous rendezvous;
    private NodeId me;

    @BeforeEach
    void open() throws Exception {
        host = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        jvm = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.JVM);
        side = new HostCmSide(host);
        rendezvous = host.host().node().rendezvous();
        me = host.host().node().id();
    }

    @AfterEach
    void close() throws Exception {
        try {
            side.close();
            assertEquals(0, host.resources().openCount(), () -> host.resources().report());
            assertEquals(0, jvm.resources().openCount(), () -> jvm.resources().report());
            assertEquals(0, host.host().cm().registeredIds(), "closed ids leave the host CM");
        } finally {
            host.close();
            jvm.close();
        }
    }

    private static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /** A live process other than this one: the parent (start stamp 0 means "the pid is all we know"). */
    private static NodeId otherLiveProcess() {
        return new NodeId(ProcessHandle.current().parent().orElseThrow().pid(), 0);
    }

    /** A process that has exited: this pid with another start stamp, as a recycled pid looks. */
    private NodeId deadProcess() {
        return new NodeId(me.pid(), me.start() + 1_000_000);
    }

    /** A port no process holds right now: bound ephemerally and let go. */
    private int freePort() throws Exception {
        CmId id = host.createId(side.events);
        try {
            id.bind(loopback(0));
            return id.localAddress().getPort();
        } finally {
            id.close();
        }
    }

    @Test
    void bindClaimsThePortHostWideAndCloseReleasesIt() throws Exception {
        CmId id = host.createId(side.events);
        id.bind(loopback(0));
        int port = id.localAddress().getPort();
        assertEquals(me, rendezvous.listenerOwner(port), "an ephemeral bind claims cm-" + port);
        id.listen(1);
        id.close();
        assertNull(rendezvous.listenerOwner(port), "close releases it");

        CmId again = host.createId(side.events);
        again.bind(loopback(port));
        assertEquals(me, rendezvous.listenerOwner(port), "an explicit bind claims it too");
        again.close();
        assertNull(rendezvous.listenerOwner(port));
    }

    @Test
    void idsOfJvmFabricDevicesClaimNothing() throws Exception {
        HostCmSide s = new HostCmSide(jvm);
        try {
            CmId id = s.id();
            id.bind(loopback(0));
            assertNull(rendezvous.listenerOwner(id.localAddress().getPort()));
        } finally {
            s.close();
        }
    }

    @Test
    void portAnotherLiveProcessHoldsIsInUse() throws Exception {
        int port = freePort();
        NodeId other = otherLiveProcess();
        assertTrue(rendezvous.claimListener(port, other));
        try {
            CmId id = side.id();
            VerbsException e = assertThrows(VerbsException.class, () -> id.bind(loopback(port)));
            assertEquals(Errno.EADDRINUSE, e.errno());
            assertEquals(other, rendezvous.listenerOwner(port), "the other process keeps its port");
            // The failed bind left nothing behind in this JVM: once the other process lets go, it binds.
            rendezvous.releaseListener(port, other);
            id.bind(loopback(port));
            assertEquals(me, rendezvous.listenerOwner(port));
        } finally {
            rendezvous.releaseListener(port, other);
        }
    }

    @Test
    void ephemeralBindSkipsPortsOtherProcessesHold() throws Exception {
        int last = freePort(); // the next ephemeral candidates are last + 1, last + 2, ...
        assumeTrue(last < 65_000, "not at the wrap of the ephemeral range");
        NodeId other = otherLiveProcess();
        assertTrue(rendezvous.claimListener(last + 1, other));
        assertTrue(rendezvous.claimListener(last + 2, other));
        try {
            CmId id = side.id();
            id.bind(loopback(0));
            int port = id.localAddress().getPort();
            assertNotEquals(last + 1, port);
            assertNotEquals(last + 2, port);
            assertEquals(me, rendezvous.listenerOwner(port));
            assertEquals(other, rendezvous.listenerOwner(last + 1));
        } finally {
            rendezvous.releaseListener(last + 1, other);
            rendezvous.releaseListener(last + 2, other);
        }
    }

    @Test
    void portOfADeadProcessIsTakenOver() throws Exception {
        int port = freePort();
        NodeId dead = deadProcess();
        assertTrue(rendezvous.claimListener(port, dead));
        try {
            CmId id = side.id();
            id.bind(loopback(port));
            assertEquals(me, rendezvous.listenerOwner(port));
        } finally {
            rendezvous.releaseListener(port, dead);
        }
    }

    @Test
    void connectToAPortNobodyHoldsIsRefusedAtOnce() throws Exception {
        int port = freePort();
        CmId id = side.resolved(loopback(port));
        long t0 = System.nanoTime();
        id.connect(new ConnectionParameters().connectTimeoutMs(20_000));
        CmEvent e = side.expect(CmEventType.REJECTED, PROMPT_MS);
        assertEquals(-Errno.ECONNREFUSED, e.status());
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < PROMPT_MS, "refused after " + ms + " ms");
    }

    @Test
    void connectToAPortOfADeadProcessIsRefusedAtOnce() throws Exception {
        int port = freePort();
        NodeId dead = deadProcess();
        assertTrue(rendezvous.claimListener(port, dead));
        try {
            CmId id = side.resolved(loopback(port));
            long t0 = System.nanoTime();
            id.connect(new ConnectionParameters().connectTimeoutMs(20_000));
            assertEquals(-Errno.ECONNREFUSED, side.expect(CmEventType.REJECTED, PROMPT_MS).status());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < PROMPT_MS, "refused after " + ms + " ms");
        } finally {
            rendezvous.releaseListener(port, dead);
        }
    }
}
