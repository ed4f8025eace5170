package io.jsdp.testbed;

/**
 * {@link CrossProcessCmConformanceTest} with the sides swapped: the active side in the forked peer JVM,
 * the passive side (the listener) a host-fabric device in this JVM.
 */
class CrossProcessCmConformanceSwappedTest extends CrossProcessCmConformanceTest {
    @Override
    String localSide() {
        return "passive";
    }
}
