package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link CrossProcessCmConformanceTest} with the sides swapped: the active side in the forked peer JVM,
 * the passive side (the listener) a host-fabric device in this JVM.
 */
class CrossProcessCmConformanceSwappedTest extends CmConformanceSuite {
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
        return side.equals("passive") ? SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST)
            : peer.openDevice();
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
