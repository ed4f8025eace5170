package io.jsdp.zcopy;

import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.shm.Rendezvous;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * The peer process of {@link CrossProcessZeroCopyTest}:
 * {@code ZeroCopyPeer <dir> listen <read|write|hold|readsink|writepaused|sinkhold> <writes> <seed> <threshold> <srcAvailTimeoutMs>}.
 * On a host-fabric SoftRdma device with zero copy it listens (printing {@code READY <port>}), accepts
 * one connection, prints {@code STREAMING}, then runs {@link Workload#write} ({@code WROTE <bytes>
 * <zeroCopyTransfers>}) or {@link Workload#read} ({@code READ <bytes> <zeroCopyBytes>}), or ({@code hold})
 * writes one 8 MiB device buffer and waits to be killed ({@code readsink}, {@code writepaused}: the
 * SinkAvail workload, {@link Workload#readSink} and the writer with pauses; {@code sinkhold}: a blocked
 * read of an advertised 8 MiB device buffer, killed meanwhile); closes, prints {@code RELEASED}, {@code LEAKS}
 * and {@code DONE}. It halts when its standard input ends.
 */
public final class ZeroCopyPeer {
    private ZeroCopyPeer() {
    }

    /**
     * Runs the peer.
     *
     * @param args see the class comment
     */
    public static void main(String[] args) {
        Thread orphanGuard = new Thread(() -> {
            try {
                InputStream in = System.in;
                while (in.read() >= 0) {
                    // only the end matters
                }
            } catch (IOException e) {
                // treated as the end
            }
            Runtime.getRuntime().halt(3);
        }, "orphan-guard");
        orphanGuard.setDaemon(true);
        orphanGuard.start();
        try {
            run(args);
            System.out.println("DONE");
            System.out.flush();
            System.exit(0);
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    /** The RDMA WRITEs into the peer's SinkAvail buffers, from a snapshot. */
    static long sinkWrites(String snapshot) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("sinkWrites=(\\d+)").matcher(snapshot);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static void run(String[] args) throws Exception {
        System.setProperty(Rendezvous.DIR_PROP, args[0]);
        String mode = args[2];
        int writes = Integer.parseInt(args[3]);
        long seed = Long.parseLong(args[4]);
        int threshold = Integer.parseInt(args[5]);
        long srcAvailMs = Long.parseLong(args[6]);
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        SdpStack stack = SdpStack.open(device);
        ZeroCopy zc = ZeroCopy.install(stack, ZeroCopySettings.fromSystemProperties().withTimeoutsMs(srcAvailMs, 10_000, 10_000));
        SdpOptions options = new SdpOptions().zcopyThreshold(threshold);
        SdpConnection c;
        try (SdpListener l = stack.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4, options)) {
            System.out.println("READY " + l.localAddress().getPort());
            System.out.flush();
            c = l.accept(TimeUnit.SECONDS.toNanos(30));
            if (c == null) {
                throw new IOException("nothing accepted within 30 s");
            }
        }
        System.out.println("STREAMING");
        System.out.flush();
        switch (mode) {
            case "write" -> {
                long n = Workload.write(c, zc, threshold, writes, seed);
                System.out.println("WROTE " + n + " " + c.stats().zeroCopyTransfers());
            }
            case "writepaused" -> {
                long n = Workload.write(c, zc, threshold, writes, seed, 4);
                System.out.println("WROTE " + n + " " + c.stats().zeroCopyTransfers() + " " + sinkWrites(c.snapshot()));
            }
            case "readsink" -> {
                long[] n = Workload.readSink(c, zc, threshold, seed);
                System.out.println("READ " + n[0] + " " + c.stats().zeroCopyBytes() + " " + n[1]);
            }
            case "sinkhold" -> {
                java.nio.ByteBuffer b = zc.allocateDirect(8 << 20);
                System.out.println("READING");
                System.out.flush();
                Zio.readHolding(c, b); // advertised with SinkAvail; the test kills us meanwhile
            }
            case "read" -> {
                long n = Workload.read(c, threshold, seed);
                System.out.println("READ " + n + " " + c.stats().zeroCopyBytes());
            }
            case "hold" -> {
                java.nio.ByteBuffer b = zc.allocateDirect(8 << 20);
                Zio.fill(b, 0, b.capacity(), 0);
                System.out.println("WRITING");
                System.out.flush();
                Zio.writeFully(c, b); // the test kills us meanwhile
            }
            default -> throw new IllegalArgumentException(mode);
        }
        System.out.flush();
        c.close();
        System.out.println("RELEASED " + c.awaitReleased(TimeUnit.SECONDS.toNanos(30)));
        stack.close();
        String leaks = device.resources().checkLeaks();
        device.close();
        System.out.println("LEAKS " + (leaks == null || leaks.isEmpty() ? "none" : leaks.replace('\n', ' ')));
    }
}
