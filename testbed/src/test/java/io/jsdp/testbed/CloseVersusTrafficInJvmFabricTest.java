package io.jsdp.testbed;

/** {@link CloseVersusTrafficTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class CloseVersusTrafficInJvmFabricTest extends CloseVersusTrafficTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
