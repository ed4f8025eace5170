package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.QpState;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Messages crossing on the host path (both devices {@link SoftDevice.Fabric#HOST_ONLY}, so every step
 * is a message through this process's node): whatever order the two ends act in, each ends in exactly
 * one terminal event and the two ends agree. Many iterations with random pauses and connect timeouts
 * of a millisecond or two, so the orders vary; the seed is printed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostCmRaceTest {
    private static final int ITERATIONS = 100;
    private static final long WAIT_MS = 5_000;
    /** How long to look for an event that must not come. */
    private static final long QUIET_MS = 2;
    private static final long WORKERS_NS = TimeUnit.SECONDS.toNanos(10);

    private SoftDevice devA;
    private SoftDevice devP;
    private HostCmSide a;
    private HostCmSide p;
    private CmId listener;
    private SplittableRandom random;

    @BeforeEach
    void open() throws Exception {
        devA = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY);
        devP = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST_ONLY);
        a = new HostCmSide(devA);
        p = new HostCmSide(devP);
        listener = p.listen(ITERATIONS + 1);
        long seed = System.nanoTime();
        System.out.println(getClass().getSimpleName() + " seed " + seed);
        random = new SplittableRandom(seed);
    }

    @AfterEach
    void close() throws Exception {
        try {
            a.close();
            p.close();
            assertEquals(0, devA.resources().openCount(), () -> devA.resources().report());
            assertEquals(0, devP.resources().openCount(), () -> devP.resources().report());
            assertNull(devA.agentFailure());
            assertNull(devP.agentFailure());
            assertEquals(0, devA.host().cm().registeredIds(), "closed ids leave the host CM");
        } finally {
            devA.close();
            devP.close();
        }
    }

    private CmEvent next(HostCmSide s, String what) throws Exception {
        CmEvent e = s.next(WAIT_MS);
        assertNotNull(e, "no event: " + what);
        return e;
    }

    private void drain(HostCmSide s) throws Exception {
        while (s.next(QUIET_MS) != null) {
            // events of ids already closed
        }
    }

    @Test
    void connectTimeoutRacingAcceptEndsAlikeOnBothSides() throws Exception {
        Map<CmEventType, Integer> outcomes = new EnumMap<>(CmEventType.class);
        for (int i = 0; i < ITERATIONS; i++) {
            CmId id = a.resolved(listener.localAddress());
            id.connect(new ConnectionParameters().connectTimeoutMs(1 + random.nextInt(2)));
            CmId child = p.adopt(p.expect(CmEventType.CONNECT_REQUEST, WAIT_MS).id());
            child.createQueuePair(p.pd, p.attrs());
            Workers.randomPause(random, 1_500_000);
            child.accept(new ConnectionParameters());
            CmEvent active = next(a, "active side, iteration " + i);
            CmEvent passive = next(p, "passive side, iteration " + i);
            assertSame(id, active.id());
            assertSame(child, passive.id());
            if (active.type() == CmEventType.ESTABLISHED) {
                assertEquals(CmEventType.ESTABLISHED, passive.type(), "iteration " + i);
                assertEquals(QpState.RTS, id.queuePair().state());
            } else {
                assertEquals(CmEventType.UNREACHABLE, active.type(), "iteration " + i);
                assertEquals(-Errno.ETIMEDOUT, active.status());
                assertEquals(CmEventType.UNREACHABLE, passive.type(), "the late accept finds nobody, iteration " + i);
                assertEquals(-Errno.ETIMEDOUT, passive.status());
            }
            outcomes.merge(active.type(), 1, Integer::sum);
            assertNull(a.next(QUIET_MS), "one terminal event, iteration " + i);
            assertNull(p.next(QUIET_MS), "one terminal event, iteration " + i);
            child.close();
            id.close();
            drain(a);
            drain(p);
        }
        System.out.println("timeout versus accept: " + outcomes);
    }

    @Test
    void crossingDisconnectsGiveEachSideOneDisconnected() throws Exception {
        for (int i = 0; i < ITERATIONS; i++) {
            CmId id = a.resolved(listener.localAddress());
            id.connect(new ConnectionParameters());
            CmId child = p.adopt(p.expect(CmEventType.CONNECT_REQUEST, WAIT_MS).id());
            child.createQueuePair(p.pd, p.attrs());
            child.accept(new ConnectionParameters());
            a.expect(CmEventType.ESTABLISHED, WAIT_MS);
            p.expect(CmEventType.ESTABLISHED, WAIT_MS);
            SplittableRandom r1 = random.split();
            SplittableRandom r2 = random.split();
            Workers.run(WORKERS_NS, () -> {
                Workers.randomPause(r1, 200_000);
                id.disconnect();
            }, () -> {
                Workers.randomPause(r2, 200_000);
                child.disconnect();
            });
            assertSame(id, a.expect(CmEventType.DISCONNECTED, WAIT_MS).id());
            assertSame(child, p.expect(CmEventType.DISCONNECTED, WAIT_MS).id());
            assertEquals(QpState.ERROR, id.queuePair().state());
            assertEquals(QpState.ERROR, child.queuePair().state());
            assertNull(a.next(QUIET_MS), "one DISCONNECTED, iteration " + i);
            assertNull(p.next(QUIET_MS), "one DISCONNECTED, iteration " + i);
            id.close();
            child.close();
        }
    }

    @Test
    void activeCloseRacingAcceptEndsUnreachableOrEstablishedThenDisconnected() throws Exception {
        Map<CmEventType, Integer> outcomes = new EnumMap<>(CmEventType.class);
        for (int i = 0; i < ITERATIONS; i++) {
            CmId id = a.resolved(listener.localAddress());
            id.connect(new ConnectionParameters());
            CmId child = p.adopt(p.expect(CmEventType.CONNECT_REQUEST, WAIT_MS).id());
            child.createQueuePair(p.pd, p.attrs());
            SplittableRandom r1 = random.split();
            SplittableRandom r2 = random.split();
            Workers.run(WORKERS_NS, () -> {
                Workers.randomPause(r1, 300_000);
                id.close();
            }, () -> {
                Workers.randomPause(r2, 300_000);
                child.accept(new ConnectionParameters());
            });
            CmEvent first = next(p, "passive side, iteration " + i);
            assertSame(child, first.id());
            if (first.type() == CmEventType.ESTABLISHED) {
                assertEquals(CmEventType.DISCONNECTED, next(p, "after ESTABLISHED, iteration " + i).type());
            } else if (first.type() != CmEventType.UNREACHABLE) {
                fail("passive side saw " + first + ", iteration " + i);
            }
            outcomes.merge(first.type(), 1, Integer::sum);
            assertNull(p.next(QUIET_MS), "nothing more, iteration " + i);
            child.close();
            drain(a);
        }
        System.out.println("active close versus accept: " + outcomes);
    }

    @Test
    void passiveCloseOrRejectRacingConnectTimeoutEndsInOneEvent() throws Exception {
        Map<String, Integer> outcomes = new TreeMap<>();
        for (int i = 0; i < ITERATIONS; i++) {
            boolean reject = (i & 1) == 0;
            CmId id = a.resolved(listener.localAddress());
            id.connect(new ConnectionParameters().connectTimeoutMs(1 + random.nextInt(2)));
            CmId child = p.adopt(p.expect(CmEventType.CONNECT_REQUEST, WAIT_MS).id());
            Workers.randomPause(random, 1_500_000);
            if (reject) {
                child.reject(new byte[] {42});
            } else {
                child.close();
            }
            CmEvent e = next(a, "active side, iteration " + i);
            assertSame(id, e.id());
            if (e.type() == CmEventType.REJECTED) {
                if (reject) {
                    assertEquals(CmEvent.REJECT_CONSUMER, e.status());
                    assertEquals(42, e.privateData()[0]);
                } else {
                    assertEquals(-Errno.ECONNREFUSED, e.status());
                }
            } else {
                assertEquals(CmEventType.UNREACHABLE, e.type(), "iteration " + i);
                assertEquals(-Errno.ETIMEDOUT, e.status());
            }
            outcomes.merge((reject ? "reject/" : "close/") + e.type(), 1, Integer::sum);
            assertNull(a.next(QUIET_MS), "one terminal event, iteration " + i);
            assertNull(p.next(QUIET_MS), "the passive side hears nothing, iteration " + i);
            id.close();
            child.close();
        }
        System.out.println("passive close or reject versus timeout: " + outcomes);
    }
}
