package io.jsdp.bench.jmh;

import java.io.IOException;
import java.util.function.BooleanSupplier;

/**
 * The other side of a cross-process benchmark, running a {@link BenchPeer.Role} for one trial: in a
 * peer JVM ({@code peer=process}, the measurement) or in a thread of the benchmark JVM
 * ({@code peer=thread}, the same code without the process boundary, for comparison and for checking
 * the benchmark itself). Closing it stops the role and releases what the role holds. A peer JVM
 * outlives the role: it serves every trial with the same placement until the benchmark JVM exits
 * ({@link PeerProcess}), so that without forking ({@code -f 0}) a raw baseline and a verbs benchmark
 * are measured between the same two processes.
 */
abstract class Peer implements AutoCloseable, BooleanSupplier {
    /** {@code peer} parameter value: a second JVM. */
    static final String PROCESS = "process";
    /** {@code peer} parameter value: a thread of this JVM. */
    static final String THREAD = "thread";

    /**
     * Places this JVM, has a peer run the role {@code roleArgs} names and waits until it is ready;
     * logs which pids and CPUs the trial uses.
     *
     * @param kind {@link #PROCESS} or {@link #THREAD}
     * @param placement where each side runs; pins this JVM too when pinned, and unpins it when not
     * @param roleArgs the role and its arguments ({@link BenchPeer#role})
     * @return the ready peer
     * @throws IOException when it cannot be started or does not become ready
     * @throws InterruptedException when interrupted while waiting
     */
    static Peer start(String kind, Placement placement, String... roleArgs) throws IOException, InterruptedException {
        Peer peer;
        switch (kind) {
            case PROCESS:
                Placement.placeThisJvm(placement.benchCpus());
                peer = PeerProcess.shared(placement).serve(roleArgs);
                break;
            case THREAD:
                Placement.placeThisJvm(placement.pinned() ? placement.benchCpus() + "," + placement.peerCpus() : null);
                peer = PeerThread.start(roleArgs);
                break;
            default:
                throw new IllegalArgumentException("peer must be " + PROCESS + " or " + THREAD + ", is '" + kind + "'");
        }
        System.out.println("# jsdp bench: " + roleArgs[0] + " peer " + peer.describe() + "; benchmark JVM pid "
            + ProcessHandle.current().pid() + " on CPUs " + Placement.allowedCpus(ProcessHandle.current().pid())
            + " (placement=" + placement.name() + ")");
        return peer;
    }

    /**
     * What the role reported when it became ready, e.g. {@code port=49152}.
     *
     * @return the READY line's information
     */
    abstract String readyInfo();

    /**
     * The connection-manager port a verbs role listens on.
     *
     * @return the port from {@link #readyInfo()}
     * @throws IllegalStateException when the role reported none
     */
    int port() {
        String info = readyInfo();
        if (!info.startsWith("port=")) {
            throw new IllegalStateException("the peer reported no port: " + info);
        }
        return Integer.parseInt(info.substring("port=".length()).trim());
    }

    /**
     * Whether the peer still runs; the benchmarks ask while they spin, so a dead peer ends a run
     * instead of hanging it.
     *
     * @return true while it runs
     */
    @Override
    public abstract boolean getAsBoolean();

    /**
     * How and where it runs, for the log: pid and CPUs, or thread.
     *
     * @return a description
     */
    abstract String describe();

    /**
     * Stops the role and waits for it; a peer JVM whose role does not stop cleanly is stopped too
     * (killed if need be). Idempotent.
     */
    @Override
    public abstract void close();
}
