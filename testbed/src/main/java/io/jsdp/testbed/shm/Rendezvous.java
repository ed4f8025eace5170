package io.jsdp.testbed.shm;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The rendezvous directory of the shared-memory fabric: where processes on one host find each other
 * and their memory. Private to the user: the directory is 0700 and owned by this user (else it is
 * refused), every file in it 0600.
 *
 * <p>Every name carries its owner, so a dead process's files are recognised and reclaimed by anyone
 * (seed 000):
 * <ul>
 *   <li>{@code node-<pid>-<start>.sock}: the process's control socket (Unix domain, {@link ShmNode});</li>
 *   <li>{@code seg-<pid>-<start>-<n>}: shared-memory segments it allocated ({@link SharedSegment});</li>
 *   <li>{@code cm-<netns>-<port>}: a listener entry of a network namespace ({@link #NETNS}), whose
 *       content is the owner's token;</li>
 *   <li>{@code addr-<netns>-<pid>-<start>}: the addresses of the process's network namespace, one a
 *       line ({@link #publishAddresses});</li>
 *   <li>{@code tmp-<pid>-<start>-<n>}: a listener entry or life file being written (renamed into place
 *       whole);</li>
 *   <li>{@code live-<pid>-<start>}: the process's life file, which its node holds an fcntl lock on for as
 *       long as it is open ({@link #holdLife}): the process lives while the lock is held
 *       ({@link #isAlive}), in whatever PID namespace it runs, and the kernel drops the lock when the
 *       process dies.</li>
 * </ul>
 * Names only their owner creates (sockets, segments, temporaries) are deleted by whoever finds the
 * owner dead; a dead process never comes back with the same token, so those deletions cannot race a
 * new owner. Listener entries change hands, so claiming, releasing and reclaiming them happen under
 * the directory's {@code lock} file (an fcntl lock, which the kernel drops when its holder dies).
 */
public final class Rendezvous {
    /** System property naming the directory. */
    public static final String DIR_PROP = "jsdp.soft.dir";
    static final TraceComponent TRACE = Trace.component("shm");
    private static final Set<PosixFilePermission> DIR_PERMS = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> FILE_PERMS = PosixFilePermissions.fromString("rw-------");
    private static final String LOCK_FILE = "lock";
    /** Property: how long a listener's claim waits for the directory lock, milliseconds. */
    public static final String LOCK_WAIT_MS_PROP = "jsdp.soft.lockWaitMs";
    /**
     * Default wait: 500 ms. Another process's claim or reclaim holds the lock for microseconds; a holder
     * that keeps it longer is stuck or foreign, and a listen that waited for it would leave its
     * application waiting too. After the wait the listen fails and the provider falls back to TCP, with a
     * warning, well inside a second.
     */
    public static final long LOCK_WAIT_MS_DEFAULT = 500;
    /** A warning about a busy lock was given and the lock was not taken since (one warning per episode). */
    private static final AtomicBoolean BUSY_WARNED = new AtomicBoolean();
    /**
     * One JVM may hold the fcntl lock once: a second channel of the same JVM gets
     * OverlappingFileLockException, so threads of this JVM queue here first. Claims are rare.
     */
    private static final ReentrantLock JVM_CLAIM_LOCK = new ReentrantLock();
    private static final AtomicLong TEMP_NUMBERS = new AtomicLong();

    private final Path dir;
    /** {@value #LOCK_WAIT_MS_PROP}, read when the directory is opened. */
    private final long lockWaitNs;
    /** The file system of {@link #dir}, looked up once (the look-up reads the mount table). */
    private volatile java.nio.file.FileStore store;

    /**
     * Opens (creating if needed) the rendezvous directory.
     *
     * @param dir the directory
     * @throws IOException when it cannot be created, or is not a directory private to this user (not
     *     a symbolic link, owned by this user, mode 0700); the message names the directory and the fix
     * @throws IllegalArgumentException when {@value #LOCK_WAIT_MS_PROP} is malformed or out of range
     */
    public Rendezvous(Path dir) throws IOException {
        this.dir = dir.toAbsolutePath();
        this.lockWaitNs = TimeUnit.MILLISECONDS.toNanos(lockWaitMs());
        Path parent = this.dir.getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        try {
            // the umask can only clear bits, so the directory is born 0700 or stricter
            Files.createDirectory(this.dir, PosixFilePermissions.asFileAttribute(DIR_PERMS));
        } catch (FileAlreadyExistsException exists) {
            // created earlier or by another process; checked below either way
        }
        checkPrivate(this.dir);
    }

    /**
     * Refuses a directory another user could reach: a link (which could point anywhere), one owned by
     * someone else (who could read our segments), or one with group/other access.
     */
    private static void checkPrivate(Path dir) throws IOException {
        PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String fix = "; remove it, or set -D" + DIR_PROP + " to a private directory";
        if (!a.isDirectory()) {
            throw new IOException("rendezvous directory " + dir + " is not a directory"
                + (a.isSymbolicLink() ? " but a symbolic link" : "") + fix);
        }
        UserPrincipal me = currentUser(dir);
        if (me != null && !a.owner().equals(me)) {
            throw new IOException("rendezvous directory " + dir + " is owned by " + a.owner().getName() + ", not by "
                + me.getName() + fix);
        }
        if (!a.permissions().equals(DIR_PERMS)) {
            throw new IOException("rendezvous directory " + dir + " must be private to its user (rwx------, 0700) but is "
                + PosixFilePermissions.toString(a.permissions()) + "; chmod 700 it" + fix);
        }
    }

    /** This process's user: the owner of /proc/self where it exists, else the user named by user.name. */
    private static UserPrincipal currentUser(Path dir) {
        try {
            return Files.getOwner(Path.of("/proc/self"));
        } catch (IOException | UnsupportedOperationException noProc) {
            try {
                return dir.getFileSystem().getUserPrincipalLookupService()
                    .lookupPrincipalByName(System.getProperty("user.name"));
            } catch (IOException | UnsupportedOperationException unknown) {
                return null; // cannot tell: rely on the mode check
            }
        }
    }

    /**
     * The default directory: {@code jsdp.soft.dir}, else {@code /dev/shm/jsdp-<user>} when /dev/shm
     * exists, else {@code <java.io.tmpdir>/jsdp-<user>}.
     *
     * @return the path
     */
    public static Path defaultDirectory() {
        String configured = System.getProperty(DIR_PROP);
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        Path shm = Path.of("/dev/shm");
        Path base = Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        return base.resolve("jsdp-" + user);
    }

    /**
     * The directory.
     *
     * @return its absolute path
     */
    public Path directory() {
        return dir;
    }

    Path nodeSocket(NodeId node) {
        return dir.resolve("node-" + node.token() + ".sock");
    }

    Path segment(NodeId node, long number) {
        return dir.resolve("seg-" + node.token() + "-" + number);
    }

    Path listenerEntry(int port) {
        return listenerEntry(NETNS, port);
    }

    private Path listenerEntry(long netns, int port) {
        return dir.resolve("cm-" + netns + "-" + port);
    }

    /** A node's published addresses: {@code addr-<netns>-<token>}. */
    Path addressEntry(NodeId owner) {
        return dir.resolve("addr-" + NETNS + "-" + owner.token());
    }

    /**
     * Publishes the addresses of this process's network namespace for {@code owner}, one per line,
     * replacing what it published before: processes of other namespaces find which namespace an address
     * of theirs belongs to ({@link #namespaceOf}), and whether a peer connects from an address of its
     * own ({@link #publishes}). Loopback addresses are private to a namespace and left out.
     *
     * @param owner the publishing process
     * @param addresses its namespace's addresses
     * @throws IOException when the entry cannot be written
     */
    public void publishAddresses(NodeId owner, Collection<InetAddress> addresses) throws IOException {
        StringBuilder b = new StringBuilder();
        for (InetAddress a : addresses) {
            if (!a.isLoopbackAddress() && !a.isAnyLocalAddress() && !a.isLinkLocalAddress()) {
                b.append(a.getHostAddress()).append('\n');
            }
        }
        Path tmp = dir.resolve("tmp-" + owner.token() + "-" + TEMP_NUMBERS.incrementAndGet());
        createPrivateFile(tmp);
        try {
            Files.writeString(tmp, b);
            Files.move(tmp, addressEntry(owner), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** Deletes what {@link #publishAddresses} wrote for {@code owner}. */
    public void withdrawAddresses(NodeId owner) {
        try {
            Files.deleteIfExists(addressEntry(owner));
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.withdrawFailed", e);
        }
    }

    /**
     * The network namespace, other than this process's, of a live process that published {@code a}
     * ({@link #publishAddresses}), or -1.
     *
     * @param a an address that is not one of this namespace
     * @return the namespace's number, or -1
     */
    public long namespaceOf(InetAddress a) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "addr-*")) {
            for (Path p : files) {
                String[] parts = p.getFileName().toString().split("-", 3); // addr, netns, token
                if (parts.length != 3) {
                    continue;
                }
                long ns;
                try {
                    ns = Long.parseLong(parts[1]);
                } catch (NumberFormatException e) {
                    continue;
                }
                NodeId owner = NodeId.parse(parts[2]);
                if (ns != NETNS && owner != null && isAlive(owner) && lists(p, a)) {
                    return ns;
                }
            }
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.scanFailed", e);
        }
        return -1;
    }

    /**
     * Whether {@code owner} published {@code a} as an address of its namespace.
     *
     * @param owner a process
     * @param a an address
     * @return true when its entry lists {@code a}
     */
    public boolean publishes(NodeId owner, InetAddress a) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "addr-*-" + owner.token())) {
            for (Path p : files) {
                if (lists(p, a)) {
                    return true;
                }
            }
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.scanFailed", e);
        }
        return false;
    }

    private static boolean lists(Path entry, InetAddress a) {
        try {
            String wanted = a.getHostAddress(); // as written: compared as text, never resolved
            for (String line : Files.readAllLines(entry)) {
                if (line.trim().equals(wanted)) {
                    return true;
                }
            }
        } catch (IOException e) {
            return false; // gone meanwhile, or not ours to read
        }
        return false;
    }

    /**
     * Deletes every file {@code owner} has in the directory (its control socket, segments, listener and
     * address entries, temporaries) without the directory's lock: for a process that is about to exit,
     * whose files would otherwise wait for another process's sweep. Its peers keep what they mapped and
     * the connections they have; new ones find nobody, as after the process has exited.
     *
     * @param owner the exiting process
     * @return the files deleted
     */
    public int deleteFilesOf(NodeId owner) {
        int deleted = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path p : files) {
                if (owner.equals(ownerOf(p)) && Files.deleteIfExists(p)) {
                    deleted++;
                }
            }
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.exitCleanupFailed", e);
        }
        return deleted;
    }

    /**
     * The owner of listener {@code port} in network namespace {@code netns}.
     *
     * @param netns the namespace ({@link #NETNS} for this process's)
     * @param port the port
     * @return the owner named by the entry, or null when there is none or it is unreadable
     */
    public NodeId listenerOwner(long netns, int port) {
        try {
            return NodeId.parse(Files.readString(listenerEntry(netns, port)).trim());
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * This process's network namespace: the inode number of {@code /proc/self/ns/net}, or 0 where it
     * cannot be read. Listener entries carry it, so a port listened on in one namespace is not found
     * from another: as with TCP, each namespace has its own ports and its own loopback.
     */
    public static final long NETNS = netns();

    private static long netns() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString(); // net:[4026531840]
            return Long.parseLong(link.substring(link.indexOf('[') + 1, link.indexOf(']')));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * Bytes the directory's file system has free for this user now.
     *
     * @return the usable bytes
     * @throws IOException when the file system cannot be asked
     */
    long usableBytes() throws IOException {
        java.nio.file.FileStore s = store;
        if (s == null) {
            s = Files.getFileStore(dir);
            store = s;
        }
        return s.getUsableSpace();
    }

    /** Creates a private file, failing if it exists. */
    void createPrivateFile(Path p) throws IOException {
        Files.createFile(p, PosixFilePermissions.asFileAttribute(FILE_PERMS));
    }

    /**
     * Claims listener port {@code port} for {@code owner}. An entry of a dead owner (or an unreadable
     * one: entries are written whole, so a partial entry is no one's) is replaced.
     *
     * @param port the port
     * @param owner the claiming process
     * @return true when claimed (or already held by {@code owner}), false when a live process holds it
     * @throws IOException when the entry cannot be written or the directory lock not taken
     */
    public boolean claimListener(int port, NodeId owner) throws IOException {
        Path entry = listenerEntry(port);
        return underLock(() -> {
            NodeId holder = listenerOwner(port);
            if (owner.equals(holder)) {
                return true;
            }
            if (holder != null && isAlive(holder)) {
                return false;
            }
            // Readers take no lock: the entry appears with its content by one rename.
            Path tmp = dir.resolve("tmp-" + owner.token() + "-" + TEMP_NUMBERS.incrementAndGet());
            createPrivateFile(tmp);
            try {
                Files.writeString(tmp, owner.token());
                Files.move(tmp, entry, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(tmp);
            }
            if (holder != null) {
                TRACE.message(TraceLevel.RARE, "shm.listenerReclaimed", "port " + port + " taken over from dead " + holder);
            }
            return true;
        });
    }

    /**
     * The owner of listener {@code port}.
     *
     * @param port the port
     * @return the owner named by the entry, or null when there is none or it is unreadable
     */
    public NodeId listenerOwner(int port) {
        return listenerOwner(NETNS, port);
    }

    /**
     * Releases listener {@code port} if {@code owner} holds it.
     *
     * @param port the port
     * @param owner the releasing process
     */
    public void releaseListener(int port, NodeId owner) {
        try {
            underLock(() -> {
                if (owner.equals(listenerOwner(port))) {
                    Files.deleteIfExists(listenerEntry(port));
                }
                return null;
            });
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.releaseListenerFailed", e);
        }
    }

    /**
     * Deletes every file of processes that are no longer alive: their sockets, segments and listener
     * entries (seed 000: automatic clean-up of a dead owner's resources). Files the fabric did not
     * name are left alone.
     *
     * @return the dead processes whose files were removed
     */
    public List<NodeId> reclaimDead() {
        try {
            return underLock(this::reclaimDeadLocked, 0); // periodic: a busy lock skips this round, no wait
        } catch (LockBusyException e) {
            TRACE.record(TraceLevel.INTERNALS, "shm.reclaimSkipped", e.holderPid());
            return List.of();
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.reclaimFailed", e);
            return List.of();
        }
    }

    private List<NodeId> reclaimDeadLocked() {
        List<NodeId> dead = new ArrayList<>();
        List<NodeId> alive = new ArrayList<>();
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path p : files) {
                NodeId owner = ownerOf(p);
                if (owner == null || alive.contains(owner)) {
                    continue;
                }
                if (!dead.contains(owner)) {
                    if (isAlive(owner)) {
                        alive.add(owner);
                        continue;
                    }
                    dead.add(owner);
                }
                try {
                    if (Files.deleteIfExists(p)) {
                        removed++;
                    }
                } catch (IOException e) {
                    TRACE.record(TraceLevel.RARE, "shm.reclaimFailed", e);
                }
            }
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.scanFailed", e);
        }
        if (!dead.isEmpty() && TRACE.on(TraceLevel.RARE)) {
            TRACE.message(TraceLevel.RARE, "shm.reclaimed", "reclaimed " + removed + " file(s) of dead process(es) " + dead);
        }
        return dead;
    }

    /**
     * Takes {@code self}'s life lock: creates its life file already locked (a temporary locked, then
     * renamed into place, so nobody finds the file unlocked while its owner lives) and returns the channel
     * holding the lock, which the node keeps open for as long as it is open. Never open and close the life
     * file elsewhere in this process: closing any descriptor of a file drops the process's fcntl locks on it.
     *
     * @param self this process
     * @return the channel holding the lock
     * @throws IOException when the file cannot be created or locked
     */
    FileChannel holdLife(NodeId self) throws IOException {
        Path life = lifeFile(self);
        for (int attempt = 0;; attempt++) {
            Path tmp = dir.resolve("tmp-" + self.token() + "-" + TEMP_NUMBERS.incrementAndGet());
            createPrivateFile(tmp);
            FileChannel ch = FileChannel.open(tmp, StandardOpenOption.READ, StandardOpenOption.WRITE);
            try {
                if (ch.tryLock() == null) {
                    throw new IOException("cannot lock " + tmp + ": another process holds it");
                }
                Files.move(tmp, life, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                return ch;
            } catch (java.nio.file.NoSuchFileException reclaimed) {
                // a process that cannot see ours (another PID namespace, an older jsdp) took the temporary
                // for a dead process's and deleted it: make another
                ch.close();
                if (attempt == 3) {
                    throw reclaimed;
                }
            } catch (IOException | RuntimeException e) {
                ch.close();
                Files.deleteIfExists(tmp);
                throw e;
            }
        }
    }

    /**
     * Gives {@code self}'s life lock up (its node closed): deletes the life file, then closes the channel,
     * which drops the lock.
     *
     * @param self this process
     * @param lock the channel {@link #holdLife} returned
     */
    void dropLife(NodeId self, FileChannel lock) {
        try {
            Files.deleteIfExists(lifeFile(self));
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.closeFailed", e);
        }
        try {
            lock.close();
        } catch (IOException e) {
            TRACE.record(TraceLevel.RARE, "shm.closeFailed", e);
        }
    }

    private Path lifeFile(NodeId owner) {
        return dir.resolve("live-" + owner.token());
    }

    /**
     * Whether process {@code p} lives, as far as this directory can tell: its life file is locked (by its
     * node: {@link #holdLife}), which works across PID namespaces, where {@code /proc/<pid>} names another
     * process or none. A process without a life file (an older jsdp, or one that has not opened its node
     * yet) is judged by {@link NodeId#isAlive()}. This process is alive.
     *
     * @param p the process
     * @return true while it lives
     */
    public boolean isAlive(NodeId p) {
        if (p.equals(NodeId.current())) {
            return true; // never open our own life file: closing it would drop our lock
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(lifeFile(p), StandardOpenOption.READ, StandardOpenOption.WRITE);
        } catch (IOException | RuntimeException noLifeFile) {
            return p.isAlive();
        }
        try (ch) {
            FileLock l = ch.tryLock();
            if (l == null) {
                return true; // its owner holds it
            }
            l.release();
            return false; // nobody holds it: the owner died (the kernel dropped its lock) or closed its node
        } catch (java.nio.channels.OverlappingFileLockException checkedHereMeanwhile) {
            return true; // another thread of this JVM holds it for a moment: decide next time
        } catch (IOException | RuntimeException e) {
            return p.isAlive();
        }
    }

    /**
     * The owner named by a rendezvous file.
     *
     * @param p a file of the directory
     * @return its owner, or null for files the fabric did not name
     */
    NodeId ownerOf(Path p) {
        String name = p.getFileName().toString();
        if (name.startsWith("node-") && name.endsWith(".sock")) {
            return NodeId.parse(name.substring(5, name.length() - 5));
        }
        if (name.startsWith("seg-")) {
            return numberedOwner(name.substring(4));
        }
        if (name.startsWith("tmp-")) {
            return numberedOwner(name.substring(4));
        }
        if (name.startsWith("live-")) {
            return NodeId.parse(name.substring(5));
        }
        if (name.startsWith("addr-")) {
            String[] parts = name.split("-", 3);
            return parts.length == 3 ? NodeId.parse(parts[2]) : null;
        }
        if (name.startsWith("cm-")) {
            try {
                return NodeId.parse(Files.readString(p).trim()); // any namespace's entry
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }

    /** The owner of {@code <pid>-<start>-<n>}. */
    private static NodeId numberedOwner(String rest) {
        int last = rest.lastIndexOf('-');
        if (last <= 0 || last == rest.length() - 1) {
            return null;
        }
        for (int i = last + 1; i < rest.length(); i++) {
            if (rest.charAt(i) < '0' || rest.charAt(i) > '9') {
                return null;
            }
        }
        return NodeId.parse(rest.substring(0, last));
    }

    /** Work done under the directory lock. */
    @FunctionalInterface
    private interface Locked<T> {
        T run() throws IOException;
    }

    /** {@link #underLock(Locked, long)} with the configured wait ({@value #LOCK_WAIT_MS_PROP}). */
    private <T> T underLock(Locked<T> work) throws IOException {
        return underLock(work, lockWaitNs);
    }

    /**
     * Runs {@code work} holding this JVM's claim lock and the directory's fcntl lock, waiting at most
     * {@code waitNs} for them. The fcntl lock is polled with short parks rather than taken with the
     * blocking {@code lock()}, which would block a carrier thread in a native wait (architecture
     * decision 5) and could wait forever for a stuck or foreign holder.
     *
     * @throws LockBusyException when another process (or thread of this one) held the lock all that time
     */
    private <T> T underLock(Locked<T> work, long waitNs) throws IOException {
        long deadline = System.nanoTime() + waitNs;
        try {
            if (!JVM_CLAIM_LOCK.tryLock(waitNs, TimeUnit.NANOSECONDS)) {
                throw new LockBusyException(dir.resolve(LOCK_FILE), "a thread of this process", -1, waitNs);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for the rendezvous lock");
        }
        try (FileChannel ch = FileChannel.open(dir.resolve(LOCK_FILE), Set.of(StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS), PosixFilePermissions.asFileAttribute(FILE_PERMS))) {
            FileLock lock;
            while ((lock = ch.tryLock()) == null) {
                if (System.nanoTime() - deadline >= 0) {
                    long pid = lockHolder(dir.resolve(LOCK_FILE));
                    LockBusyException busy = new LockBusyException(dir.resolve(LOCK_FILE),
                        pid > 0 ? "process " + pid : "another process", pid, waitNs);
                    if (waitNs > 0 && BUSY_WARNED.compareAndSet(false, true)) {
                        TRACE.message(TraceLevel.ERROR, "shm.lockBusy", "jsdp: " + busy.getMessage()
                            + "; SDP listeners opened while it holds it listen on TCP only");
                    }
                    throw busy;
                }
                LockSupport.parkNanos(100_000);
            }
            BUSY_WARNED.set(false);
            try {
                return work.run();
            } finally {
                lock.release();
            }
        } finally {
            JVM_CLAIM_LOCK.unlock();
        }
    }

    /**
     * The process holding an fcntl lock on {@code file}, from {@code /proc/locks} (its lines name the
     * holder's pid and the file's device and inode); -1 when it cannot be told. The pid is as the
     * holder's PID namespace numbers it when that is not ours.
     */
    static long lockHolder(Path file) {
        try {
            long inode = ((Number) Files.getAttribute(file, "unix:ino", LinkOption.NOFOLLOW_LINKS)).longValue();
            long self = ProcessHandle.current().pid();
            for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
                // "1: POSIX  ADVISORY  WRITE 1234 00:1a:5678 0 EOF" (a waiter's line has "->" after the number)
                String[] f = line.trim().split("\\s+");
                if (f.length < 6 || f[1].equals("->")) {
                    continue;
                }
                String[] dev = f[5].split(":");
                if (dev.length == 3 && Long.parseLong(dev[2]) == inode) {
                    long pid = Long.parseLong(f[4]);
                    if (pid != self) {
                        return pid;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1; // no /proc/locks, or a format this does not know: the message goes without the pid
        }
        return -1;
    }

    private static long lockWaitMs() {
        long ms = ShmSettings.longProperty(LOCK_WAIT_MS_PROP, LOCK_WAIT_MS_DEFAULT);
        if (ms < 0 || ms > 60_000) {
            throw new IllegalArgumentException(LOCK_WAIT_MS_PROP + " must be 0 ... 60000, is " + ms);
        }
        return ms;
    }

    /** The directory lock stayed held for the whole wait. */
    public static final class LockBusyException extends IOException {
        private static final long serialVersionUID = 1L;
        private final long holderPid;

        LockBusyException(Path lockFile, String holder, long holderPid, long waitedNs) {
            super("rendezvous lock " + lockFile + " held by " + holder + " for over "
                + TimeUnit.NANOSECONDS.toMillis(waitedNs) + " ms");
            this.holderPid = holderPid;
        }

        /**
         * The holder's pid, or -1 when not known.
         *
         * @return the pid
         */
        public long holderPid() {
            return holderPid;
        }
    }
}
