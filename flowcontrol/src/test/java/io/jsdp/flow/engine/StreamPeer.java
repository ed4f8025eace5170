package io.jsdp.flow.engine;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.testbed.shm.Rendezvous;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The peer process of the cross-JVM stream tests ({@link CrossProcessStreamTest}):
 * {@code StreamPeer <dir> <listen|connect:PORT> <read|write|both|echo> <bytes> <seed> <default|tiny|spin0>}
 * ({@code echo}: {@code bytes}-byte messages echoed until EOF, then {@code ECHOED <messages>}).
 *
 * <p>On a host-fabric SoftRdma device of rendezvous directory {@code dir} it runs an {@link SdpStack},
 * either listens on an ephemeral loopback port (printing {@code READY <port>}) and accepts one
 * connection, or connects to {@code PORT} (printing {@code CONNECTED}); then it writes {@code bytes}
 * of the {@link StreamCheck} pattern (random sizes up to 1 MiB, sizes seeded by {@code seed}) and
 * shuts its output down, reads until EOF checking every byte (sizes seeded by {@code seed + 1}), or
 * both at once, printing {@code STREAMING} first and {@code WROTE}/{@code READ <bytes> <crc>
 * <operations>} for each direction. Then it closes the connection and prints
 * {@code RELEASED <true|false>}, closes the stack and device and prints {@code LEAKS <none|report>}
 * and {@code DONE}. Any failure prints {@code ERROR <what>} and exits 1.
 *
 * <p>It halts when its standard input ends: the test JVM is gone, and a spinning orphan must not
 * outlive it.
 */
public final class StreamPeer {
    /** The largest write and read. */
    static final int MAX_IO = 1 << 20;

    private StreamPeer() {
    }

    /**
     * The options a name stands for.
     *
     * @param name {@code default} or {@code tiny}
     * @return the options
     */
    static SdpOptions options(String name) {
        return switch (name) {
            case "default" -> new SdpOptions();
            // two data credits (the third buffer is the reserved one) of 4 KiB, two send slots
            case "tiny" -> new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(2);
            // blocking: every wait parks at once (no spin window)
            case "spin0" -> new SdpOptions().spinNs(0);
            default -> throw new IllegalArgumentException("options: " + name);
        };
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
                    // nothing is sent; only the end matters
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

    private static void run(String[] args) throws Exception {
        System.setProperty(Rendezvous.DIR_PROP, args[0]);
        String mode = args[2];
        long bytes = Long.parseLong(args[3]);
        long seed = Long.parseLong(args[4]);
        SdpOptions options = options(args[5]);
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        SdpStack stack = SdpStack.open(device);
        SdpConnection c;
        if (args[1].equals("listen")) {
            try (SdpListener l = stack.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4, options)) {
                System.out.println("READY " + l.localAddress().getPort());
                c = l.accept(TimeUnit.SECONDS.toNanos(30));
                if (c == null) {
                    throw new IOException("nothing accepted within 30 s");
                }
            }
        } else {
            int port = Integer.parseInt(args[1].substring("connect:".length()));
            c = stack.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), options);
            if (!c.awaitConnected(TimeUnit.SECONDS.toNanos(30))) {
                throw new IOException("connect: " + c.failureDetail());
            }
            System.out.println("CONNECTED");
        }
        System.out.println("STREAMING");
        if (mode.equals("echo")) {
            echo(c, (int) bytes);
        }
        CompletableFuture<StreamCheck.Result> reader = null;
        if (mode.equals("read") || mode.equals("both")) {
            reader = CompletableFuture.supplyAsync(() -> {
                try {
                    return StreamCheck.read(c, MAX_IO, seed + 1);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, TestThreads.POOL);
        }
        if (mode.equals("write") || mode.equals("both")) {
            print("WROTE", StreamCheck.write(c, bytes, MAX_IO, seed, seed % 2 == 0));
        }
        if (reader != null) {
            print("READ", reader.get(300, TimeUnit.SECONDS));
        }
        c.close();
        System.out.println("RELEASED " + c.awaitReleased(TimeUnit.SECONDS.toNanos(30)));
        stack.close();
        String leaks = device.resources().checkLeaks();
        device.close();
        System.out.println("LEAKS " + (leaks == null || leaks.isEmpty() ? "none" : leaks.replace('\n', ' ')));
    }

    /** Echoes {@code size}-byte messages until EOF, printing {@code ECHOED <messages>}. */
    private static void echo(SdpConnection c, int size) throws Exception {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocateDirect(size);
        long n = 0;
        while (true) {
            b.clear();
            int got = 0;
            while (b.hasRemaining()) {
                int r = Blocking.read(c, b);
                if (r < 0) {
                    if (got > 0) {
                        throw new IOException("EOF inside a message");
                    }
                    System.out.println("ECHOED " + n);
                    return;
                }
                got += r;
            }
            b.flip();
            Blocking.writeFully(c, b);
            n++;
        }
    }

    private static void print(String what, StreamCheck.Result r) {
        System.out.println(what + " " + r.bytes() + " " + r.crc() + " " + r.operations());
        System.out.flush();
    }
}
