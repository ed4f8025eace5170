package io.jsdp.testbed;

/** {@link PingPongStressTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class PingPongStressInJvmFabricTest extends PingPongStressTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
