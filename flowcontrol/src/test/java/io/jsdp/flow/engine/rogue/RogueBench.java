package io.jsdp.flow.engine.rogue;

import io.jsdp.flow.Violation;
import io.jsdp.flow.engine.Failure;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpListener;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceRecord;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Test fixture for rogue-peer tests: the engine under attack (device E, its stack and a listener), a
 * healthy peer (device H, its stack) with one connection to E streaming both ways the whole time, and
 * the rogue's device R. Closing it checks that the healthy stream delivered every byte, that no
 * engine thread ever caught an exception from a handler, and that no device leaked.
 */
final class RogueBench implements AutoCloseable {
    /** Longest wait for any one outcome: nothing may hang past it. */
    static final long OUTCOME_NS = TimeUnit.SECONDS.toNanos(5);
    /** Trace events the stack records when a handler threw: none may appear. */
    private static final Set<String> HANDLER_FAILURES = Set.of("progress.connectionFailed", "cm.handlerFailed",
        "timer.taskFailed", "conn.internalError");

    final SoftDevice deviceE = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
    final SoftDevice deviceH = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
    final SoftDevice deviceR = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
    final SdpStack stackE;
    final SdpStack stackH;
    final SdpListener listenerE;
    final ProtectionDomain pdR;
    final SdpOptions engineOptions;
    private final long ffdcStart;
    private final long traceStart;
    private SdpConnection healthyH;
    private SdpConnection healthyE;
    private HealthyStream stream;

    RogueBench(SdpOptions engineOptions, boolean healthy) throws Exception {
        this.engineOptions = engineOptions;
        List<FfdcRecord> before = Ffdc.recent();
        ffdcStart = before.isEmpty() ? 0 : before.get(before.size() - 1).id();
        List<TraceRecord> trace = Trace.flightRecorder().snapshot();
        traceStart = trace.isEmpty() ? -1 : trace.get(trace.size() - 1).sequence();
        stackE = SdpStack.open(deviceE);
        stackH = SdpStack.open(deviceH);
        listenerE = stackE.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64, engineOptions);
        pdR = deviceR.allocateProtectionDomain();
        if (healthy) {
            healthyH = stackH.connect(listenerE.localAddress(), new SdpOptions().bufferBytes(8192).receiveBuffers(4)
                .sendBuffers(4).flowControl(engineOptions.flowControl()));
            if (!healthyH.awaitConnected(OUTCOME_NS)) {
                throw new AssertionError("healthy connect: " + healthyH.failureDetail());
            }
            healthyE = listenerE.accept(OUTCOME_NS);
            if (healthyE == null || healthyE.flowControlScheme() != engineOptions.flowControl()) {
                throw new AssertionError("healthy connection: " + (healthyE == null ? "not accepted" : healthyE.flowControl()));
            }
            stream = new HealthyStream(healthyH, healthyE);
            stream.awaitProgress(64 * 1024, OUTCOME_NS);
        }
    }

    /** Asserts the healthy connection keeps moving data (checked byte by byte as it goes). */
    void assertHealthyStillStreams() throws InterruptedException {
        if (stream != null) {
            stream.awaitProgress(256 * 1024, OUTCOME_NS);
        }
    }

    /**
     * The engine connection the listener established for a rogue's valid Hello.
     *
     * @return the connection
     */
    SdpConnection acceptEngine() throws InterruptedException {
        SdpConnection c = listenerE.accept(OUTCOME_NS);
        if (c == null) {
            throw new AssertionError("the engine accepted nothing within 5 s");
        }
        return c;
    }

    /**
     * Asserts the engine connection failed with the violation: FAILED, {@link Failure#PROTOCOL_VIOLATION},
     * and an FFDC record "protocol.NAME" whose summary names the connection. The connection's
     * application is reading (awaiting OP_READ), as a blocked reader would be.
     *
     * @return the record
     */
    static FfdcRecord assertViolation(SdpConnection c, Violation v) throws InterruptedException {
        int ops = c.await(SdpConnection.OP_READ | SdpConnection.OP_ENDED, OUTCOME_NS);
        if (ops == 0 || c.state() != SdpConnection.State.FAILED) {
            throw new AssertionError("expected " + v + ", the connection is " + c.state() + "\n" + c.snapshot());
        }
        if (c.failure() != Failure.PROTOCOL_VIOLATION || !c.failureDetail().contains(v.name())) {
            throw new AssertionError("expected " + v + ", failed with " + c.failureDetail());
        }
        if (c.read(java.nio.ByteBuffer.allocate(1)) != SdpConnection.FAILED) {
            throw new AssertionError("read after the violation must say FAILED");
        }
        return record(v, c.id());
    }

    /** The FFDC record of {@code v} whose summary names connection {@code id}. */
    static FfdcRecord record(Violation v, long id) {
        String prefix = "connection " + id + " ";
        for (FfdcRecord r : Ffdc.find("protocol." + v.name(), prefix)) {
            if (r.kind().equals("protocol." + v.name()) && r.summary().startsWith(prefix)
                && r.summary().contains(Failure.PROTOCOL_VIOLATION.name())) {
                return r;
            }
        }
        throw new AssertionError("no FFDC record protocol." + v + " for connection " + id + "; recent: " + recentSummaries());
    }

    /**
     * Asserts a passive engine connection that never reached {@link SdpListener#accept} failed its
     * handshake with {@code v}: an FFDC record "protocol.NAME" for the connection whose remote address
     * is the rogue's, the listener queues nothing, and the stack releases it.
     *
     * @return the record
     */
    FfdcRecord assertHandshakeViolation(RoguePeer rogue, Violation v, int baselineConnections) throws InterruptedException {
        String port = ":" + rogue.localAddress().getPort();
        long deadline = System.nanoTime() + OUTCOME_NS;
        for (;;) {
            for (FfdcRecord r : Ffdc.find("protocol." + v.name(), port)) {
                if (r.kind().equals("protocol." + v.name()) && r.id() > ffdcStart && remoteEndsWith(r, port)
                    && r.snapshot().contains(" passive ") && r.summary().contains(Failure.PROTOCOL_VIOLATION.name())) {
                    awaitConnections(baselineConnections);
                    if (listenerE.accept() != null) {
                        throw new AssertionError("a connection that broke its handshake was queued for accept");
                    }
                    return r;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no FFDC record protocol." + v + " for the connection from port " + port
                    + "; recent: " + recentSummaries());
            }
            Thread.sleep(1);
        }
    }

    /** Whether the record's connection had its remote end on {@code port} (snapshot line "local … remote …"). */
    private static boolean remoteEndsWith(FfdcRecord r, String port) {
        for (String line : r.snapshot().split("\n")) {
            if (line.startsWith("local ") && line.endsWith(port)) {
                return true;
            }
        }
        return false;
    }

    /** The kinds and summaries of recent records, for failure messages. */
    static String recentSummaries() {
        StringBuilder b = new StringBuilder();
        for (FfdcRecord r : Ffdc.recent()) {
            b.append("\n  ").append(r.kind()).append(": ").append(r.summary());
        }
        return b.toString();
    }

    /** Waits until the engine stack holds {@code n} connections (the failed one released). */
    void awaitConnections(int n) throws InterruptedException {
        long deadline = System.nanoTime() + OUTCOME_NS;
        while (stackE.openConnections() != n) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("the engine stack holds " + stackE.openConnections() + " connections, expected " + n);
            }
            Thread.sleep(1);
        }
    }

    /** Asserts no engine thread caught an exception from a handler and no internal-error record exists. */
    void assertNoHandlerFailures() {
        for (FfdcRecord r : Ffdc.recent()) {
            if (r.id() > ffdcStart && r.kind().startsWith("internal.")) {
                throw new AssertionError("the engine threw inside a handler: " + r.render());
            }
        }
        for (TraceRecord t : Trace.flightRecorder().snapshot()) {
            if (t.sequence() > traceStart && HANDLER_FAILURES.contains(t.event())) {
                throw new AssertionError("an engine thread caught an exception: " + t);
            }
        }
    }

    @Override
    public void close() throws ExecutionException, TimeoutException, VerbsException {
        try {
            if (stream != null) {
                stream.stopAndVerify();
            }
            assertNoHandlerFailures();
        } finally {
            if (stream != null) {
                stream.close();
            }
            listenerE.close();
            stackE.close();
            stackH.close();
            pdR.close();
            String leaks = "";
            for (SoftDevice d : new SoftDevice[] {deviceE, deviceH, deviceR}) {
                String l = d.resources().checkLeaks();
                if (l != null && !l.isEmpty()) {
                    leaks += l;
                }
                d.close();
            }
            if (!leaks.isEmpty()) {
                throw new AssertionError("leaks: " + leaks);
            }
        }
    }
}
