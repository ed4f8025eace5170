package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.RdmaDevice;
import org.junit.jupiter.api.AfterEach;
import io.jsdp.verbs.conformance.VerbsConformanceSuite;

/**
 * The verbs conformance suite through the chain SoftRdma → DiSNI shim → DiSNI → verbs-disni in one JVM
 * (issue 4, acceptance 1): both sides are adapter devices over the one SoftRdma device under the shim, as two
 * applications share a host's adapter. After every test the adapter's devices and the SoftRdma device under
 * them must hold nothing: the adapter releases every DiSNI object it made.
 */
class DisniChainVerbsConformanceTest extends VerbsConformanceSuite {
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
    protected Faults faults() {
        return (device, ns) -> DisniChain.softUnder(device).faults().readDelayNs(ns);
    }

    @Override
    protected boolean setsQueuePairTimers() {
        return false; // librdmacm's timers; DiSNI cannot modify a queue pair
    }

    @Override
    protected void assertNoOpenResources(RdmaDevice device) {
        super.assertNoOpenResources(device);
        assertEquals(0, DisniChain.soft().resources().openCount(), () -> DisniChain.soft().resources().report());
    }
}
