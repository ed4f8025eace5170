package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.testbed.shm.ChildJvm;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SocketFactories#install()} in a child JVM (the factories are JVM-wide and set once), then plain
 * {@code java.net} code ({@link SocketFactoriesChild}): bytes echo intact over SDP, a second install is
 * refused saying why, and (issue 6 acceptance 4) 1,000 virtual threads blocked in reads on jsdp sockets
 * leave the two carriers free for another virtual thread — on JDK 21 and later; on JDK 17, which has no
 * virtual threads, that case is skipped saying so. The child gets 512 MiB and SoftRdma's in-JVM fabric
 * for its 1,000 connections.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SocketFactoriesForkedTest {

    @Test
    void plainJavaNetSocketsEchoOverSdpOnceTheFactoriesAreInstalled() throws Exception {
        try (ChildJvm child = ChildJvm.start(SocketFactoriesChild.class, "echo")) {
            child.awaitLine("installed", 60, TimeUnit.SECONDS);
            String echo = child.awaitLine("echo ", 60, TimeUnit.SECONDS);
            assertTrue(echo.startsWith("echo ok transport=sdp"), echo);
            String second = child.awaitLine("second install: ", 30, TimeUnit.SECONDS);
            assertTrue(second.contains("refused") && second.contains("already installed"), second);
        }
    }

    @Test
    void manyVirtualThreadsBlockedInJsdpReadsLeaveTheSchedulerFree() throws Exception {
        assumeTrue(VirtualThreadsForTests.available(), () -> {
            String why = VirtualThreadsForTests.skipReason();
            System.out.println("skipped: " + why);
            return why;
        });
        // a thousand connections in one JVM: SoftRdma's in-JVM fabric (no shared-memory wires) and room for them
        try (ChildJvm child = ChildJvm.start(List.of("-Xmx512m", "-Djsdp.soft.fabric=jvm"), SocketFactoriesChild.class,
            "vthreads", "1000")) {
            String connected = child.awaitLine("connected ", 90, TimeUnit.SECONDS);
            assertTrue(connected.contains("transport=sdp"), connected);
            assertEquals("ticker ran", child.awaitLine("ticker ", 30, TimeUnit.SECONDS));
            assertEquals("reads done 1000", child.awaitLine("reads ", 60, TimeUnit.SECONDS));
        }
    }
}
