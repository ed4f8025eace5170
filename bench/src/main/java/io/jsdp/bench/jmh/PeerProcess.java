package io.jsdp.bench.jmh;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A peer JVM that serves {@link BenchPeer} roles one after another, one per trial: the same
 * {@code java} binary and class path as this JVM, under {@code taskset} when the placement pins it,
 * with this JVM's {@code jsdp.*} system properties (so both join the same rendezvous directory).
 *
 * <p>One per placement and benchmark JVM ({@link #shared}): started on first use and kept until this
 * JVM exits, so that every trial of a run with that placement, the raw baseline's and the verbs
 * benchmark's, talks to the same peer pid. Without forking ({@code -f 0}) that is the whole JMH run;
 * with forking each fork has its own. The pid and CPUs are logged once at start, and again for each
 * role ({@link Peer#start}).
 *
 * <p>The peer's standard error goes straight to ours; its standard output carries the control lines
 * of {@link BenchPeer} (read by one daemon thread) and anything else, echoed with a {@code [peer]}
 * prefix.
 *
 * <p>No orphans: a shutdown hook stops the peer when this JVM exits (closes its input, on which it
 * stops its role and exits; then destroy; then destroy forcibly); a peer that fails (a role that does
 * not open or ends in failure, a stop that is not acknowledged) is stopped the same way at once and
 * replaced on next use; and if this JVM is killed outright, the peer's input ends with it and the peer
 * exits by itself.
 */
final class PeerProcess {
    private static final long START_TIMEOUT_MS = 60_000;
    private static final long READY_TIMEOUT_MS = 30_000;
    /** Above the peer's own 10 s limit on a role's stop, after which it halts. */
    private static final long STOP_ACK_TIMEOUT_MS = 15_000;
    private static final long EXIT_WAIT_MS = 5_000;

    /**
     * The running peer per placement; guarded by {@code PeerProcess.class}. Lock order: a peer's
     * monitor, then this lock ({@link #discard} under {@link #serve}); never the other way but for a
     * peer not yet published ({@link #launch}).
     */
    private static final Map<Placement, PeerProcess> SHARED = new HashMap<>();

    private enum State { IDLE, STARTING, RUNNING }

    private final Placement placement;
    private final Process process;
    private final OutputStream commands;
    private final Thread hook;
    /** How many roles were asked for; written by the benchmark thread under this monitor. */
    private int rolesAsked;

    // ---- written by the output reader under this monitor, read by the benchmark thread ----
    /** Volatile as well, so {@link Serving#getAsBoolean()} reads it without the monitor. */
    private volatile State state = State.IDLE;
    private volatile boolean outputEnded;
    private boolean started;
    private String readyInfo;
    private String endedOutcome;

    /** The role the benchmark side holds, or null; written by the benchmark thread under this monitor. */
    private volatile Serving current;

    private PeerProcess(Placement placement, Process process) {
        this.placement = placement;
        this.process = process;
        this.commands = process.getOutputStream();
        this.hook = new Thread(() -> stopProcess(process), "jsdp-bench-peer-reaper");
    }

    /**
     * This JVM's peer for {@code placement}, started now if there is none (or the last one failed).
     * A role still held from an earlier trial is stopped first: JMH skips a trial's teardown when
     * the benchmark method throws.
     *
     * @param placement where it runs
     * @return the idle peer
     * @throws IOException when it cannot be launched or does not start in time
     * @throws InterruptedException when interrupted while waiting
     */
    static PeerProcess shared(Placement placement) throws IOException, InterruptedException {
        PeerProcess p;
        synchronized (PeerProcess.class) {
            p = SHARED.get(placement);
        }
        // Outside the registry's lock: stopping takes the peer's monitor, which nests the other way.
        Serving left = p != null ? p.current : null;
        if (left != null) {
            System.out.println("# jsdp bench: peer process pid " + p.process.pid() + " still serves " + left.name
                + " from a trial that ended without its teardown; stopping that role");
            p.stopRole(left); // discards the peer if the role does not stop cleanly
        }
        synchronized (PeerProcess.class) {
            p = SHARED.get(placement);
            if (p == null || !p.process.isAlive()) {
                if (p != null) {
                    System.out.println("# jsdp bench: peer process pid " + p.process.pid() + " has exited; starting another");
                    p.discard();
                }
                p = launch(placement);
                SHARED.put(placement, p);
            }
            return p;
        }
    }

    private static PeerProcess launch(Placement placement) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(placement.peerCommandPrefix());
        command.add(ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("jsdp.")) {
                command.add("-D" + name + "=" + System.getProperty(name));
            }
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(BenchPeer.class.getName());
        PeerProcess p = new PeerProcess(placement,
            new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        Runtime.getRuntime().addShutdownHook(p.hook);
        Thread reader = new Thread(p::readOutput, "jsdp-bench-peer-output");
        reader.setDaemon(true);
        reader.start();
        try {
            synchronized (p) {
                p.await(() -> p.started, START_TIMEOUT_MS, "start");
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.discard();
            throw e;
        }
        // Read after STARTED: by then taskset has set the CPUs and exec'd the JVM under the same pid.
        System.out.println("# jsdp bench: started peer process pid " + p.process.pid() + " on CPUs "
            + Placement.allowedCpus(p.process.pid()) + " for placement=" + placement.name()
            + "; it serves every trial with this placement until benchmark JVM pid " + ProcessHandle.current().pid()
            + " exits");
        return p;
    }

    /** The output reader: control lines update the state, anything else goes to the log. */
    private void readOutput() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!control(line)) {
                    System.out.println("[peer] " + line);
                }
            }
        } catch (IOException e) {
            System.err.println("bench peer " + process.pid() + ": reading its output failed: " + e);
        }
        synchronized (this) {
            outputEnded = true;
            notifyAll();
        }
    }

    private synchronized boolean control(String line) {
        if (line.equals(BenchPeer.STARTED)) {
            started = true;
        } else if (line.startsWith(BenchPeer.READY + " ") && state == State.STARTING) {
            readyInfo = line.substring(BenchPeer.READY.length()).trim();
            state = State.RUNNING;
        } else if (line.startsWith(BenchPeer.ENDED + " ") && state != State.IDLE) {
            endedOutcome = line.substring(BenchPeer.ENDED.length()).trim();
            state = State.IDLE;
        } else {
            return false;
        }
        notifyAll();
        return true;
    }

    /** Waits under this monitor until {@code done} holds; fails when the output ends or time runs out. */
    private void await(BooleanSupplier done, long timeoutMs, String what) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!done.getAsBoolean()) {
            if (outputEnded) {
                throw new IOException("bench peer " + process.pid() + " exited during " + what + " (exit status "
                    + (process.waitFor(1, TimeUnit.SECONDS) ? process.exitValue() : "none yet")
                    + "; its stderr is above)");
            }
            long leftNs = deadline - System.nanoTime();
            if (leftNs <= 0) {
                throw new IOException("bench peer " + process.pid() + ": no answer to " + what + " within "
                    + timeoutMs + " ms");
            }
            TimeUnit.NANOSECONDS.timedWait(this, leftNs);
        }
    }

    /**
     * Has the peer open the role {@code roleArgs} names and start serving it.
     *
     * @param roleArgs the role and its arguments ({@link BenchPeer#role}); no whitespace inside one
     * @return the running role; closing it stops the role, not the process
     * @throws IOException when the role does not open (the peer is then stopped: see the class comment)
     * @throws InterruptedException when interrupted while waiting
     * @throws IllegalStateException when a role is still held
     */
    synchronized Peer serve(String... roleArgs) throws IOException, InterruptedException {
        if (current != null || state != State.IDLE) {
            throw new IllegalStateException("bench peer " + process.pid() + " still serves a role");
        }
        for (String a : roleArgs) {
            if (a.isEmpty() || a.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("role argument '" + a + "' is empty or holds whitespace");
            }
        }
        try {
            state = State.STARTING;
            send(String.join(" ", roleArgs));
            await(() -> state != State.STARTING, READY_TIMEOUT_MS, roleArgs[0]);
            if (state != State.RUNNING) {
                throw new IOException("bench peer " + process.pid() + " could not open " + roleArgs[0] + ": "
                    + endedOutcome);
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            discard();
            throw e;
        }
        current = new Serving(roleArgs[0], readyInfo, ++rolesAsked);
        return current;
    }

    private void send(String line) throws IOException {
        commands.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        commands.flush();
    }

    /** Stops {@code role} if it is the current one; discards the peer when that does not go cleanly. */
    private synchronized void stopRole(Serving role) {
        if (current != role) {
            return;
        }
        current = null;
        try {
            if (state != State.IDLE) {
                send(BenchPeer.STOP);
            }
            await(() -> state == State.IDLE, STOP_ACK_TIMEOUT_MS, "stop " + role.name);
            if (!endedOutcome.equals(BenchPeer.ENDED_OK)) {
                System.err.println("bench peer " + process.pid() + ": " + role.name + " ended " + endedOutcome
                    + "; stopping the peer");
                discard();
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("bench peer " + process.pid() + ": stopping " + role.name + " failed (" + e.getMessage()
                + "); stopping the peer");
            discard();
        } catch (InterruptedException e) {
            discard();
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the process now and forgets it, so the next {@link #shared} starts a fresh one. */
    private void discard() {
        synchronized (PeerProcess.class) {
            SHARED.remove(placement, this);
        }
        stopProcess(process);
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // this JVM is shutting down: the hook runs anyway, harmlessly
        }
        if (!process.isAlive() && process.exitValue() != 0) {
            System.err.println("bench peer " + process.pid() + " exited with status " + process.exitValue());
        }
    }

    /** Closes the input (the peer stops its role and exits), then destroys, then destroys forcibly. */
    private static void stopProcess(Process p) {
        try {
            p.getOutputStream().close();
        } catch (IOException e) {
            // already closed: the peer sees the end either way
        }
        try {
            if (!p.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS)) {
                System.err.println("bench peer " + p.pid() + " did not exit within " + EXIT_WAIT_MS + " ms; destroying");
                p.destroy();
                if (!p.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly();
                    p.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS);
                }
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** A role this peer serves, as the benchmark holds it. */
    private final class Serving extends Peer {
        private final String name;
        private final String info;
        private final int number;

        Serving(String name, String info, int number) {
            this.name = name;
            this.info = info;
            this.number = number;
        }

        @Override
        String readyInfo() {
            return info;
        }

        /** True while this role runs: the benchmark's spin loops ask now and then. */
        @Override
        public boolean getAsBoolean() {
            return current == this && state == State.RUNNING && process.isAlive();
        }

        @Override
        String describe() {
            return "process pid " + process.pid() + " on CPUs " + Placement.allowedCpus(process.pid())
                + " (role " + number + " of this peer)";
        }

        /** Stops the role; the process stays for the next trial. */
        @Override
        public void close() {
            stopRole(this);
        }
    }
}
