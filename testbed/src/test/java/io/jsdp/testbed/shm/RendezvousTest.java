package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The rendezvous directory: privacy, owner-named files, listener entries, reclaim (seed 000). */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
class RendezvousTest {
    /** A token of no live process: this pid with another start stamp. */
    private static final NodeId DEAD = new NodeId(NodeId.current().pid(), NodeId.current().start() + 1_000_000);

    @TempDir
    Path tmp;

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    @Test
    void directoryIsPrivateAndEveryFileInItIsOwnerOnly() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        assertEquals("rwx------", mode(r.directory()));
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults())) {
            SharedSegment seg = node.createSegment(4096);
            assertTrue(r.claimListener(7000, node.id()));
            assertEquals("rw-------", mode(seg.path()));
            assertEquals("rw-------", mode(r.listenerEntry(7000)));
            assertEquals("rw-------", mode(r.nodeSocket(node.id())));
            r.releaseListener(7000, node.id());
        }
    }

    @Test
    void directoryWithGroupOrOtherAccessIsRefusedWithTheFix() throws Exception {
        Path dir = Files.createDirectory(tmp.resolve("open"), PosixFilePermissions.asFileAttribute(
            PosixFilePermissions.fromString("rwx------")));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        IOException e = assertThrows(IOException.class, () -> new Rendezvous(dir));
        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("0700") && e.getMessage().contains("rwxr-xr-x"), e.getMessage());
        assertTrue(e.getMessage().contains(Rendezvous.DIR_PROP), e.getMessage());
    }

    @Test
    void symbolicLinkInPlaceOfTheDirectoryIsRefused() throws Exception {
        Path real = new Rendezvous(tmp.resolve("real")).directory();
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        IOException e = assertThrows(IOException.class, () -> new Rendezvous(link));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
    }

    @Test
    void listenerIsClaimedOnceReleasedByItsOwnerOnlyAndTakenFromADeadOwner() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        NodeId me = NodeId.current();
        assertTrue(r.claimListener(5000, me));
        assertEquals(me, r.listenerOwner(5000));
        assertTrue(r.claimListener(5000, me), "re-claim by the holder");

        r.releaseListener(5000, DEAD); // not the holder: no effect
        assertEquals(me, r.listenerOwner(5000));
        r.releaseListener(5000, me);
        assertNull(r.listenerOwner(5000));

        Files.writeString(r.listenerEntry(5001), DEAD.token());
        assertTrue(r.claimListener(5001, me), "a dead owner's entry is taken over");
        assertEquals(me, r.listenerOwner(5001));
    }

    @Test
    void aForeignHolderOfTheLockFailsAClaimAfterTheBoundedWaitAndTheSweepSkipsItsRound() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        Files.writeString(r.listenerEntry(5003), DEAD.token()); // a dead owner's entry: what a sweep would reclaim
        try (ChildJvm holder = ChildJvm.start("lock", tmp.resolve("rv").toString())) {
            assertTrue(holder.awaitLine("READY", 15, TimeUnit.SECONDS).endsWith("true"), "the child holds the lock");
            long t0 = System.nanoTime();
            Rendezvous.LockBusyException e = assertThrows(Rendezvous.LockBusyException.class,
                () -> r.claimListener(5004, NodeId.current()));
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(waitedMs >= Rendezvous.LOCK_WAIT_MS_DEFAULT - 50 && waitedMs < 1_000,
                "waited the configured 500 ms, not seconds: " + waitedMs + " ms");
            assertEquals(holder.pid(), e.holderPid(), e.getMessage());
            assertTrue(e.getMessage().contains("held by process " + holder.pid() + " for over 500 ms"), e.getMessage());
            t0 = System.nanoTime();
            assertEquals(List.of(), r.reclaimDead(), "the sweep skips its round");
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < Rendezvous.LOCK_WAIT_MS_DEFAULT,
                "the sweep (on the node thread) does not wait for the lock");
            assertTrue(Files.exists(r.listenerEntry(5003)), "nothing reclaimed meanwhile");
        }
        // the holder gone (the kernel drops its lock): claims and sweeps work again
        assertTrue(r.claimListener(5004, NodeId.current()));
        assertEquals(List.of(DEAD), r.reclaimDead());
        assertFalse(Files.exists(r.listenerEntry(5003)));
    }

    @Test
    void liveHoldersListenerCannotBeClaimed() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        NodeId parentOfThisJvm = new NodeId(ProcessHandle.current().parent().orElseThrow().pid(), 0);
        Files.writeString(r.listenerEntry(5002), parentOfThisJvm.token());
        assertFalse(r.claimListener(5002, NodeId.current()));
        assertEquals(parentOfThisJvm, r.listenerOwner(5002));
    }

    @Test
    void reclaimDeadRemovesOnlyDeadOwnersFilesAndLeavesForeignFiles() throws Exception {
        Rendezvous r = new Rendezvous(tmp.resolve("rv"));
        NodeId me = NodeId.current();
        List<Path> deadFiles = List.of(r.segment(DEAD, 1), r.segment(DEAD, 2), r.nodeSocket(DEAD),
            r.directory().resolve("tmp-" + DEAD.token() + "-9"));
        for (Path p : deadFiles) {
            r.createPrivateFile(p);
        }
        Files.writeString(r.listenerEntry(6000), DEAD.token());
        r.createPrivateFile(r.segment(me, 1));
        assertTrue(r.claimListener(6001, me));
        r.createPrivateFile(r.directory().resolve("notes.txt"));
        r.createPrivateFile(r.directory().resolve("seg-garbage"));

        assertEquals(List.of(DEAD), r.reclaimDead());
        for (Path p : deadFiles) {
            assertFalse(Files.exists(p), p.toString());
        }
        assertFalse(Files.exists(r.listenerEntry(6000)));
        assertTrue(Files.exists(r.segment(me, 1)));
        assertEquals(me, r.listenerOwner(6001));
        assertTrue(Files.exists(r.directory().resolve("notes.txt")));
        assertTrue(Files.exists(r.directory().resolve("seg-garbage")));
        assertEquals(List.of(), r.reclaimDead(), "nothing left to reclaim");
    }
}
