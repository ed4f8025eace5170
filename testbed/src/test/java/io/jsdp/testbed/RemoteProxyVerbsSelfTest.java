package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.conformance.VerbsConformanceSuite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The verbs conformance suite through {@link RemoteDevice}, both sides in one peer JVM (connected
 * there in-JVM): the proxy must carry every call, completion, exception and byte of device memory
 * faithfully, independently of the cross-process data path.
 */
class RemoteProxyVerbsSelfTest extends VerbsConformanceSuite {
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
    protected Faults faults() {
        return (device, ns) -> ((RemoteDevice) device).faults().readDelayNs(ns);
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        RemoteDevice.OpenResources open = RemoteDevice.openResources(device);
        assertEquals(0, open.count(), open::report);
    }
}
