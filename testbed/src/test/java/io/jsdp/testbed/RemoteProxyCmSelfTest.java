package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import java.net.InetAddress;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The connection-manager suite through {@link RemoteDevice}, both sides in one peer JVM: events, the
 * ids they carry (one proxy per id), private data and exceptions must come through unchanged.
 */
class RemoteProxyCmSelfTest extends CmConformanceSuite {
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
        return peer.openDevice();
    }

    @Override
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        ((RemoteDevice) device).faults().blackhole(address);
        return true;
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        RemoteDevice.OpenResources open = RemoteDevice.openResources(device);
        assertEquals(0, open.count(), open::report);
    }
}
