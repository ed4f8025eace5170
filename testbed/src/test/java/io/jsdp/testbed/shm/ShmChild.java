package io.jsdp.testbed.shm;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The peer process of the cross-process tests. Prints {@code READY ...} when set up, results on
 * later lines, and otherwise waits to be killed. Modes:
 * <ul>
 *   <li>{@code owner <dir> <port>}: a node, a segment and listener entry {@code port};</li>
 *   <li>{@code connect <dir> <peer-token>}: a node connected to the peer's node;</li>
 *   <li>{@code pingpong <dir> <segment> <rounds>}: waits on word 1 and wakes word 0, {@code rounds} times;</li>
 *   <li>{@code park <dir> <ms>}: parks on its own wait word for {@code ms} with nobody waking it and
 *       reports the CPU time that took.</li>
 * </ul>
 */
public final class ShmChild {
    private ShmChild() {
    }

    /**
     * Runs one mode.
     *
     * @param args the mode and its arguments
     * @throws Exception on any failure (the test sees the stack trace in the output)
     */
    public static void main(String[] args) throws Exception {
        Rendezvous r = new Rendezvous(Path.of(args[1]));
        switch (args[0]) {
            case "owner": {
                ShmNode node = ShmNode.open(r, ShmSettings.defaults().withPeerCheckMs(3_600_000));
                SharedSegment seg = node.createSegment(4096);
                int port = Integer.parseInt(args[2]);
                if (!r.claimListener(port, node.id())) {
                    throw new IllegalStateException("port " + port + " taken");
                }
                System.out.println("READY " + node.id().token() + " " + seg.name());
                Thread.sleep(Long.MAX_VALUE);
                break;
            }
            case "connect": {
                ShmNode node = ShmNode.open(r, ShmSettings.defaults().withPeerCheckMs(3_600_000));
                if (!node.connect(NodeId.parse(args[2]))) {
                    throw new IllegalStateException("no node " + args[2]);
                }
                System.out.println("READY " + node.id().token());
                Thread.sleep(Long.MAX_VALUE);
                break;
            }
            case "exit": {
                // the files of a node, then a normal exit without closing it
                ShmNode node = ShmNode.open(r, ShmSettings.defaults().withPeerCheckMs(3_600_000));
                SharedSegment seg = node.createSegment(4096);
                if (!r.claimListener(Integer.parseInt(args[2]), node.id())) {
                    throw new IllegalStateException("port " + args[2] + " taken");
                }
                r.publishAddresses(node.id(), java.util.List.of(java.net.InetAddress.getByName("192.0.2.77")));
                System.out.println("READY " + node.id().token() + " " + seg.name());
                System.out.flush();
                break;
            }
            case "lock": {
                // a foreign process holding the directory's lock, as a stuck or hostile one would
                try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(Path.of(args[1]).resolve("lock"),
                        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
                     java.nio.channels.FileLock held = ch.lock()) {
                    System.out.println("READY " + held.isValid());
                    Thread.sleep(Long.MAX_VALUE);
                }
                break;
            }
            case "pingpong":
                pingPong(r, args[2], Integer.parseInt(args[3]));
                break;
            case "park":
                park(r, Long.parseLong(args[2]));
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }

    private static void pingPong(Rendezvous r, String segment, int rounds) throws Exception {
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults().withSpinNs(0))) {
            SharedSegment seg = node.openSegment(segment);
            WaitWord parent = WaitWord.at(node, seg, 0);
            WaitWord mine = WaitWord.at(node, seg, WaitWord.BYTES);
            mine.bindWaiter();
            long observed = mine.sequence();
            System.out.println("READY " + node.id().token());
            for (int i = 0; i < rounds; i++) {
                long s = mine.await(observed, TimeUnit.SECONDS.toNanos(10));
                if (s < 0) {
                    System.out.println("FAIL round " + i + " status " + s);
                    return;
                }
                observed = s;
                parent.wake();
            }
            System.out.println("DONE parks=" + mine.parks() + " rescues=" + mine.safetyNetRescues() + " rung="
                + parent.doorbellsRung());
        }
    }

    private static void park(Rendezvous r, long ms) throws Exception {
        try (ShmNode node = ShmNode.open(r, ShmSettings.defaults())) {
            WaitWord w = WaitWord.at(node, node.createSegment(WaitWord.BYTES), 0);
            w.bindWaiter();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            // Let start-up work (class loading, JIT of what ran so far) die down: only the park counts.
            Thread.sleep(1_000);
            long process0 = os.getProcessCpuTime();
            long thread0 = threads.getCurrentThreadCpuTime();
            long wall0 = System.nanoTime();
            long status = w.await(w.sequence(), TimeUnit.MILLISECONDS.toNanos(ms));
            long wall = System.nanoTime() - wall0;
            long thread = threads.getCurrentThreadCpuTime() - thread0;
            long process = os.getProcessCpuTime() - process0;
            System.out.println("CPU status=" + status + " wallNs=" + wall + " processNs=" + process + " threadNs=" + thread
                + " parks=" + w.parks());
        }
    }
}
