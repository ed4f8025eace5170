package io.jsdp.testbed;

/** {@link ArmNotifyRaceTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class ArmNotifyRaceInJvmFabricTest extends ArmNotifyRaceTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
