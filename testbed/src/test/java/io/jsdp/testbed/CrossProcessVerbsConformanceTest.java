package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.VerbsConformanceSuite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The verbs conformance suite with its two sides in two JVMs (issue 3, acceptance 1): A, the active
 * side, is a SoftRdma device of the host fabric in this JVM; B, the passive side, a device in a forked
 * peer JVM, driven through {@link RemoteDevice}. Connection, data and completions cross processes
 * through the shared-memory fabric exactly as between two applications.
 */
class CrossProcessVerbsConformanceTest extends VerbsConformanceSuite {
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
        return side.equals(localSide()) ? SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST)
            : peer.openDevice();
    }

    /** The side whose device is in this JVM; the other is in the peer JVM. */
    String localSide() {
        return "A";
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
