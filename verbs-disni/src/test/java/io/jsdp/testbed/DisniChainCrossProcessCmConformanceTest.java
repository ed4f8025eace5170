package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.RdmaDevice;
import org.junit.jupiter.api.AfterEach;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import io.jsdp.verbs.disni.DisniChain;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The connection-manager suite through the chain with its two sides in two JVMs: the active side an adapter
 * device over this JVM's shim, the passive side one over the shim of a forked peer JVM.
 */
class DisniChainCrossProcessCmConformanceTest extends CmConformanceSuite {
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
        return side.equals("active") ? DisniChain.open() : peer.openDevice();
    }

    @Override
    protected boolean carriesPrivateData() {
        return false;
    }

    @Override
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        if (device instanceof RemoteDevice remote) {
            remote.faults().blackhole(address);
        } else {
            DisniChain.softUnder(device).faults().blackhole(address);
        }
        return true;
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        RemoteDevice.OpenResources open = RemoteDevice.openResources(device);
        assertEquals(0, open.count(), open::report);
    }
}
