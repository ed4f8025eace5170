package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.VerbsConformanceSuite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link CrossProcessVerbsConformanceTest} with the sides swapped: A, the active side and requester of
 * most cases, in the forked peer JVM; B, the passive side, a host-fabric device in this JVM. The
 * connection manager and the queue pairs must not care which process initiated.
 */
class CrossProcessVerbsConformanceSwappedTest extends VerbsConformanceSuite {
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

    @Override
    protected RdmaDevice openDevice(String side) throws Exception {
        return side.equals("B") ? SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST) : peer.openDevice();
    }

    @Override
    protected Faults faults() {
        return (device, ns) -> {
            if (device instanceof RemoteDevice remote) {
                remote.faults().readDelayNs(ns);
            } else {
                ((SoftDevice) device).faults().readDelayNs(ns);
            }
        };
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        RemoteDevice.OpenResources open = RemoteDevice.openResources(device);
        assertEquals(0, open.count(), open::report);
    }
}
