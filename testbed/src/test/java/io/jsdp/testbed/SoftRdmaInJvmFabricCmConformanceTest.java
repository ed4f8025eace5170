package io.jsdp.testbed;

/** {@link SoftRdmaCmConformanceTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class SoftRdmaInJvmFabricCmConformanceTest extends SoftRdmaCmConformanceTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
