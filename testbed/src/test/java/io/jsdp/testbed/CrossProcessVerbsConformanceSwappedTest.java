package io.jsdp.testbed;

/**
 * {@link CrossProcessVerbsConformanceTest} with the sides swapped: A, the active side and requester of
 * most cases, in the forked peer JVM; B, the passive side, a host-fabric device in this JVM. The
 * connection manager and the queue pairs must not care which process initiated.
 */
class CrossProcessVerbsConformanceSwappedTest extends CrossProcessVerbsConformanceTest {
    @Override
    String localSide() {
        return "B";
    }
}
