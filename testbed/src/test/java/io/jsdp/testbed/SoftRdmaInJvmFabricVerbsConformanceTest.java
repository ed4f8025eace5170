package io.jsdp.testbed;

/** {@link SoftRdmaVerbsConformanceTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class SoftRdmaInJvmFabricVerbsConformanceTest extends SoftRdmaVerbsConformanceTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
