package io.jsdp.testbed;

/** {@link ListenerBacklogTest} on the in-JVM fabric: the requester executes directly against the responder's queues. */
class ListenerBacklogInJvmFabricTest extends ListenerBacklogTest {
    @Override
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.JVM;
    }
}
