package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.RdmaDevice;
import org.junit.jupiter.api.AfterEach;
import io.jsdp.verbs.conformance.CmConformanceSuite;
import java.net.InetAddress;

/**
 * The connection-manager suite through the chain SoftRdma → DiSNI shim → DiSNI → verbs-disni in one JVM: the
 * events the shim produces (ADDR_RESOLVED/ERROR, ROUTE_RESOLVED, CONNECT_REQUEST, ESTABLISHED, REJECTED,
 * UNREACHABLE, CONNECT_ERROR, DISCONNECTED) reach the port through DiSNI and the adapter's CM thread and
 * state machine; private data and reject reasons, which DiSNI cannot carry, are refused.
 */
class DisniChainCmConformanceTest extends CmConformanceSuite {
    /** Every chain device of this JVM shares the SoftRdma device under the shim: its faults must not outlive a test. */
    @AfterEach
    void clearSharedFaults() {
        DisniChain.soft().faults().clear();
    }


    @Override
    protected RdmaDevice openDevice(String side) throws Exception {
        return DisniChain.open();
    }

    @Override
    protected boolean carriesPrivateData() {
        return false;
    }

    @Override
    protected boolean blackhole(RdmaDevice device, InetAddress address) {
        DisniChain.softUnder(device).faults().blackhole(address);
        return true;
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        super.assertNoOpenResources(device);
        assertEquals(0, DisniChain.soft().resources().openCount(), () -> DisniChain.soft().resources().report());
    }
}
