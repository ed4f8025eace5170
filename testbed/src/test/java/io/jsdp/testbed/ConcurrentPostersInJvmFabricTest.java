package io.jsdp.testbed;

/** {@link ConcurrentPostersTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class ConcurrentPostersInJvmFabricTest extends ConcurrentPostersTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
