package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 3 acceptance 2, the rendezvous half: a process killed -9 leaves files that anyone reclaims; and
 * (issue 28) a process that exits normally without closing its node leaves none.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OwnerReclaimTest {
    @TempDir
    Path tmp;

    private static Set<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    @Test
    void killedOwnersSegmentsAndListenerEntriesAreReclaimed() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        // No sweep during the test: reclaimDead() below must be the one that finds the child dead.
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults().withPeerCheckMs(3_600_000));
             ChildJvm child = ChildJvm.start("owner", r.directory().toString(), "7001")) {
            SharedSegment mine = node.createSegment(4096);
            assertTrue(r.claimListener(7000, node.id()));

            String[] ready = child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ");
            NodeId childId = NodeId.parse(ready[1]);
            assertEquals(child.pid(), childId.pid());
            Set<String> childFiles = Set.of("node-" + childId.token() + ".sock", "live-" + childId.token(), ready[2],
                r.listenerEntry(7001).getFileName().toString());
            Set<String> before = names(r.directory());
            assertTrue(before.containsAll(childFiles), before.toString());
            assertEquals(childId, r.listenerOwner(7001));

            child.kill(); // SIGKILL: no shutdown hook, no close
            assertEquals(List.of(childId), r.reclaimDead());

            Set<String> expected = new TreeSet<>(before);
            expected.removeAll(childFiles);
            assertEquals(expected, names(r.directory()), "exactly the child's files are gone");
            assertTrue(Files.exists(mine.path()));
            assertTrue(Files.exists(r.nodeSocket(node.id())));
            assertEquals(node.id(), r.listenerOwner(7000));
            r.releaseListener(7000, node.id());
        }
    }

    @Test
    void aProcessThatExitsWithoutClosingItsNodeLeavesNoFiles() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        try (ChildJvm child = ChildJvm.start("exit", r.directory().toString(), "7002")) {
            String[] ready = child.awaitLine("READY", 30, TimeUnit.SECONDS).split(" ");
            NodeId childId = NodeId.parse(ready[1]);
            assertEquals(0, child.awaitExit(30, TimeUnit.SECONDS));
            Set<String> left = new TreeSet<>();
            for (String name : names(r.directory())) {
                if (name.contains(childId.token()) || name.startsWith("cm-")) {
                    left.add(name);
                }
            }
            assertEquals(Set.of(), left, "files of the exited child");
            assertEquals(null, r.listenerOwner(7002));
        }
    }
}
