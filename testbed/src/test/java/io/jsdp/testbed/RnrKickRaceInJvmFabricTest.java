package io.jsdp.testbed;

/** {@link RnrKickRaceTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class RnrKickRaceInJvmFabricTest extends RnrKickRaceTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
