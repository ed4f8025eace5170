package io.jsdp.provider.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 27, item 3: Netty's native transports make their system calls from C and never reach the
 * provider, so under the agent an application on them would silently stay on kernel TCP. The agent
 * turns them off for Netty and for the copy shaded into grpc-netty-shaded (which reads a relocated
 * property), unless {@code jsdp.agent.netty.forceNio=false} or the user set Netty's property. Each case
 * runs {@link NettyNativeMain} in a JVM of its own, next to one without the agent in which epoll loads,
 * so no assertion holds merely because this machine lacks epoll.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NettyNativeTransportsIT {
    private static final Path JAR = ForkedJvm.JAR;

    /** One copy's line: {@code available}, the property's value in that JVM, the cause. */
    private record Copy(boolean available, String property, String cause) {
        static Copy parse(String line) {
            String[] w = line.split(" ", 4);
            return new Copy(Boolean.parseBoolean(w[1].substring("available=".length())), w[2].substring(w[2].indexOf('=') + 1),
                w[3].substring("cause=".length()));
        }
    }

    private static List<String> command(List<String> jvmArgs) {
        return ForkedJvm.command(NettyNativeMain.class, "64m", jvmArgs);
    }

    /** Runs {@link NettyNativeMain}; returns {Netty's epoll, gRPC's shaded epoll}. */
    private static Copy[] run(String... jvmArgs) throws Exception {
        assertTrue(Files.isRegularFile(JAR), "build the jar first: " + JAR);
        try (ForkedJvm jvm = new ForkedJvm(command(List.of(jvmArgs)))) {
            Copy netty = Copy.parse(jvm.await("NETTY"));
            Copy grpc = Copy.parse(jvm.await("GRPC"));
            jvm.await("DONE");
            return new Copy[] {netty, grpc};
        }
    }

    /** Without the agent epoll loads here, for both copies: what makes the other tests mean something. */
    private static void assertEpollAvailableWithoutTheAgent() throws Exception {
        Copy[] plain = run();
        assertTrue(plain[0].available(), "Netty's epoll does not load on this machine without the agent: " + plain[0]);
        assertTrue(plain[1].available(), "gRPC's shaded epoll does not load on this machine without the agent: " + plain[1]);
    }

    @Test
    void theAgentMakesNettyAndGrpcEpollUnavailableNamingTheProperty() throws Exception {
        assertEpollAvailableWithoutTheAgent();
        Copy[] agent = run("-javaagent:" + JAR);
        for (Copy c : agent) {
            assertFalse(c.available(), c.toString());
            assertEquals("true", c.property(), c.toString());
            assertTrue(c.cause().contains("explicit disabled with -Dio.netty.transport.noNative=true"), c.toString());
        }
    }

    @Test
    void forceNioFalseLeavesTheNativeTransportsAvailable() throws Exception {
        Copy[] kept = run("-javaagent:" + JAR, "-Djsdp.agent.netty.forceNio=false");
        for (Copy c : kept) {
            assertTrue(c.available(), c.toString());
            assertEquals("null", c.property(), c.toString());
        }
    }

    @Test
    void theAgentArgumentNettyNativeKeepLeavesThemAvailableToo() throws Exception {
        for (Copy c : run("-javaagent:" + JAR + "=netty-native=keep")) {
            assertTrue(c.available(), c.toString());
        }
    }

    @Test
    void aNettyPropertyTheUserSetIsKept() throws Exception {
        Copy[] agent = run("-javaagent:" + JAR, "-Dio.netty.transport.noNative=false");
        assertTrue(agent[0].available(), "the user's io.netty.transport.noNative=false wins: " + agent[0]);
        assertEquals("false", agent[0].property());
        assertFalse(agent[1].available(), "gRPC's copy, which the user did not configure, is still forced: " + agent[1]);
    }

    @Test
    void aBadForceNioValueStopsTheJvmNamingTheProperty() throws Exception {
        Process p = new ProcessBuilder(command(List.of("-javaagent:" + JAR, "-Djsdp.agent.netty.forceNio=maybe")))
            .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertTrue(p.exitValue() != 0, out);
        assertTrue(out.contains("jsdp.agent.netty.forceNio: expected true or false, got 'maybe'"), out);
        assertFalse(out.contains("DONE"), out);
    }
}
