package io.jsdp.bench.jmh;

import java.io.IOException;

/**
 * A peer as a thread of the benchmark JVM: the role is opened in the caller's thread (so a failure
 * surfaces in the benchmark's setup) and served by one daemon thread.
 */
final class PeerThread extends Peer {
    private static final long STOP_WAIT_MS = 5_000;

    private final BenchPeer.Role role;
    private final String readyInfo;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile Throwable failure;
    private boolean closed;

    private PeerThread(BenchPeer.Role role, String readyInfo) {
        this.role = role;
        this.readyInfo = readyInfo;
        this.thread = new Thread(this::serve, "jsdp-bench-peer");
        thread.setDaemon(true);
    }

    /**
     * Opens the role and starts serving it.
     *
     * @param roleArgs the role and its arguments
     * @return the ready peer
     * @throws IOException when the role cannot be opened
     */
    static PeerThread start(String... roleArgs) throws IOException {
        BenchPeer.Role role = BenchPeer.role(roleArgs);
        try {
            PeerThread peer = new PeerThread(role, role.open());
            peer.thread.start();
            return peer;
        } catch (IOException | RuntimeException e) {
            role.close();
            throw e;
        }
    }

    private void serve() {
        try {
            role.run(() -> running);
        } catch (IOException | InterruptedException | RuntimeException | Error e) {
            failure = e;
            e.printStackTrace();
        }
    }

    @Override
    String readyInfo() {
        return readyInfo;
    }

    @Override
    public boolean getAsBoolean() {
        return thread.isAlive();
    }

    @Override
    String describe() {
        return "thread of this JVM" + (failure != null ? " (failed: " + failure + ")" : "");
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        running = false;
        try {
            thread.join(STOP_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            System.err.println("bench peer thread did not stop within " + STOP_WAIT_MS + " ms");
            return;
        }
        try {
            role.close();
        } catch (IOException e) {
            System.err.println("bench peer thread: close failed: " + e);
        }
    }
}
