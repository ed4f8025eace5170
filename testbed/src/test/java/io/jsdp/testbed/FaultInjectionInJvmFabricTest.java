package io.jsdp.testbed;

/** {@link FaultInjectionTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class FaultInjectionInJvmFabricTest extends FaultInjectionTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
