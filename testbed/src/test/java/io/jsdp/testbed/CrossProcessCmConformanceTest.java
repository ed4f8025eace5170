package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The connection-manager suite with its two sides in two JVMs (issue 3, acceptance 1): the active side
 * a SoftRdma device of the host fabric in this JVM, the passive side a device in a forked peer JVM,
 * driven through {@link RemoteDevice}. Connect requests, answers and disconnects cross processes.
 */
class CrossProcessCmConformanceTest extends CmConformanceSuite {
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
        return "active";
    }

    @Override
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        if (device instanceof RemoteDevice remote) {
            remote.faults().blackhole(address);
        } else {
            ((SoftDevice) device).faults().blackhole(address);
        }
        return true;
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        RemoteDevice.OpenResources open = RemoteDevice.openResources(device);
        assertEquals(0, open.count(), open::report);
    }
}
