package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jsdp.testbed.shm.ChildJvm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30: no space for a connection's shared memory is not a failure of the connect. A JVM whose
 * rendezvous directory lies on a small tmpfs (mounted for the test: root, as CI runs) opens its device
 * but cannot have a connection's segments: its connects go to TCP, the reason counted
 * ({@code resources}), and the bytes arrive.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FullShmTest {
    /** Room for the device's own segments (its key table, its first sockets), not for a connection's. */
    private static final String TMPFS_SIZE = "1m";

    @TempDir
    Path tmp;

    private static int run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }

    @Test
    void aConnectWithoutRoomInTheRendezvousFileSystemFallsBackToTcpCounted() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "mounting a tmpfs needs root (CI runs as root)");
        Path mount = Files.createDirectory(tmp.resolve("small"));
        assertEquals(0, run("mount", "-t", "tmpfs", "-o", "size=" + TMPFS_SIZE + ",mode=0700", "tmpfs", mount.toString()),
            "mount a " + TMPFS_SIZE + " tmpfs");
        try (ChildJvm child = ChildJvm.start(List.of("-Djsdp.soft.dir=" + mount.resolve("rv")), FullShmChild.class)) {
            String listen = child.awaitLine("LISTEN", 60, TimeUnit.SECONDS);
            assertTrue(listen.startsWith("LISTEN sdp"), "the device opened and the listener is on SDP: " + listen);
            String client = child.awaitLine("CLIENT", 60, TimeUnit.SECONDS);
            assertTrue(client.startsWith("CLIENT tcp (no SDP resources: "), client);
            String counted = child.awaitLine("COUNTED", 60, TimeUnit.SECONDS);
            assertTrue(counted.contains("resources=1"), counted);
            assertEquals(0, child.awaitExit(30, TimeUnit.SECONDS), "the child ended normally");
        } finally {
            assertEquals(0, run("umount", "-l", mount.toString()), "unmount the tmpfs");
        }
    }
}
