package io.jsdp.testbed;

/** {@link ScatterGatherIntegrityTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class ScatterGatherIntegrityInJvmFabricTest extends ScatterGatherIntegrityTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
