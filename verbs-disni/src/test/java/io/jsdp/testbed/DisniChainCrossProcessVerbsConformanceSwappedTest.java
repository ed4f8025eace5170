package io.jsdp.testbed;

/**
 * {@link DisniChainCrossProcessVerbsConformanceTest} with the sides swapped: A, the active side and requester
 * of most cases, in the forked peer JVM; B, the passive side, in this JVM.
 */
class DisniChainCrossProcessVerbsConformanceSwappedTest extends DisniChainCrossProcessVerbsConformanceTest {
    @Override
    String localSide() {
        return "B";
    }
}
