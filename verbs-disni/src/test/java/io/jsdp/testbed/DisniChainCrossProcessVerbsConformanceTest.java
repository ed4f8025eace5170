package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.RdmaDevice;
import org.junit.jupiter.api.AfterEach;
import io.jsdp.verbs.conformance.VerbsConformanceSuite;
import io.jsdp.verbs.disni.DisniChain;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The verbs conformance suite through the chain SoftRdma → DiSNI shim → DiSNI → verbs-disni with its two
 * sides in two JVMs (issue 4, acceptance 1): A, the active side, an adapter device over this JVM's shim; B,
 * an adapter device over the shim of a forked peer JVM, driven through {@link RemoteDevice}. Between them
 * runs SoftRdma's shared-memory host fabric, as between two applications on one host.
 */
class DisniChainCrossProcessVerbsConformanceTest extends VerbsConformanceSuite {
    /** Every chain device of this JVM shares the SoftRdma device under the shim: its faults must not outlive a test. */
    @AfterEach
    void clearSharedFaults() {
        DisniChain.soft().faults().clear();
    }

    private static RemotePeer peer;

    @BeforeAll
    static void startPeer() throws Exception {
        peer = RemotePeer.start(DisniChainPeerDevices.class);
    }

    @AfterAll
    static void stopPeer() {
        if (peer != null) {
            peer.close();
        }
    }

    @Override
    protected RdmaDevice openDevice(String side) throws Exception {
        return side.equals(localSide()) ? DisniChain.open() : peer.openDevice();
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
                DisniChain.softUnder(device).faults().readDelayNs(ns);
            }
        };
    }

    @Override
    protected boolean setsQueuePairTimers() {
        return false; // librdmacm's timers; DiSNI cannot modify a queue pair
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        RemoteDevice.OpenResources open = RemoteDevice.openResources(device);
        assertEquals(0, open.count(), open::report);
    }
}
