package io.jsdp.provider;

import io.jsdp.SdpMXBean;
import io.jsdp.SdpSocketInfo;
import io.jsdp.flow.engine.SdpConnection;
import io.jsdp.flow.engine.SdpStack;
import io.jsdp.flow.engine.StackStatistics;
import io.jsdp.ras.Ffdc;
import io.jsdp.ras.FfdcRecord;
import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceLevel;
import io.jsdp.ras.TraceRecord;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@link SdpMXBean}: totals from the SDP stack and the provider, the sockets from
 * {@link SocketRegistry}, and the on-demand dump. Registered once, on a daemon thread, when the provider
 * opens its first socket or its stack: the platform MBean server's start costs tens of milliseconds
 * that no connect should wait for, and a JVM without one (no {@code java.management} module, or a
 * failing builder) only loses the MBean — which the trace says — never a connection.
 */
final class SdpManagement implements SdpMXBean {
    private static volatile boolean registering;
    private static volatile String registrationProblem;

    private SdpManagement() {
    }

    /** Registers the MBean in the background, once per JVM. */
    static void ensureRegistered() {
        if (registering) {
            return;
        }
        synchronized (SdpManagement.class) {
            if (registering) {
                return;
            }
            registering = true;
        }
        Thread t = new Thread(SdpManagement::register, "jsdp-jmx-register");
        t.setDaemon(true);
        t.start();
    }

    private static void register() {
        try {
            javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            javax.management.ObjectName name = new javax.management.ObjectName(OBJECT_NAME);
            if (!server.isRegistered(name)) {
                server.registerMBean(new SdpManagement(), name);
            }
            SdpRuntime.TRACE.message(TraceLevel.RARE, "jmx.registered", "jsdp: MBean " + OBJECT_NAME + " registered");
        } catch (Exception | LinkageError e) {
            registrationProblem = String.valueOf(e);
            SdpRuntime.TRACE.message(TraceLevel.ERROR, "jmx.notRegistered", "jsdp: no MBean " + OBJECT_NAME + ": " + e
                + " (statistics and the stat tool are unavailable; connections are not affected)");
        }
    }

    /** Why registration failed, or null. */
    static String registrationProblem() {
        return registrationProblem;
    }

    private static StackStatistics.Totals totals() {
        SdpStack s = SdpRuntime.stackIfOpen();
        return s == null ? null : s.totals();
    }

    @Override
    public String getDevice() {
        SdpStack s = SdpRuntime.stackIfOpen();
        if (s != null) {
            return s.rdmaDevice().name() + " (" + s.rdmaDevice().provider() + ")";
        }
        String why = SdpRuntime.unavailableReason();
        return why != null ? "none: " + why : "not opened yet";
    }

    @Override
    public SdpSocketInfo[] getSockets() {
        return SocketRegistry.describeAll().toArray(new SdpSocketInfo[0]);
    }

    @Override
    public long getSdpConnectionsOpened() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.opened();
    }

    @Override
    public long getSdpConnectionsEstablished() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.established();
    }

    @Override
    public long getSdpConnectionsLive() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.live();
    }

    @Override
    public long getSdpConnectionsReleased() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.released();
    }

    @Override
    public Map<String, Long> getSdpFailures() {
        StackStatistics.Totals t = totals();
        return t == null ? Map.of() : t.failures();
    }

    @Override
    public long getBytesSent() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.bytesSent();
    }

    @Override
    public long getBytesReceived() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.bytesReceived();
    }

    @Override
    public long getMessagesSent() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.messagesSent();
    }

    @Override
    public long getMessagesReceived() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.messagesReceived();
    }

    @Override
    public long getCreditStalls() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.creditStalls();
    }

    @Override
    public long getCreditStallNanos() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.creditStallNs();
    }

    @Override
    public long getRnrRetries() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.rnrRetries();
    }

    @Override
    public long getZeroCopyTransfers() {
        StackStatistics.Totals t = totals();
        return t == null ? 0 : t.zeroCopyTransfers();
    }

    @Override
    public Map<String, Long> getFallbacks() {
        return SocketRegistry.fallbacks();
    }

    @Override
    public long getTcpBytesSent() {
        return SocketRegistry.tcpSent();
    }

    @Override
    public long getTcpBytesReceived() {
        return SocketRegistry.tcpReceived();
    }

    @Override
    public String getSpinning() {
        return io.jsdp.flow.engine.SpinGovernor.jvm().describe() + ", window at most " + new io.jsdp.flow.engine.SdpOptions().spinNs()
            + " ns (jsdp.spinNs)";
    }

    @Override
    public String getLimits() {
        SdpStack s = SdpRuntime.stackIfOpen();
        return s == null ? "no stack" : s.limits().describe();
    }

    @Override
    public String getNettyNativeTransports() {
        String s = Agent.nettyNativeTransports();
        return s != null ? s : "left alone (jsdp's agent did not install the provider in this JVM)";
    }

    @Override
    public String getTrace() {
        return Trace.describe();
    }

    @Override
    public void setTrace(String levels) {
        Trace.configure(levels);
        SdpRuntime.TRACE.message(TraceLevel.RARE, "jmx.trace", "jsdp: trace levels now " + Trace.describe());
    }

    @Override
    public String dump() {
        return dumpText();
    }

    /** The dump's text (also without JMX, for tests). */
    static String dumpText() {
        StringBuilder b = new StringBuilder(16_384);
        b.append("jsdp dump: pid ").append(ProcessHandle.current().pid()).append(" at ").append(Instant.now())
            .append(" (jsdp ").append(version()).append(", java ").append(System.getProperty("java.version")).append(")\n");
        b.append("device: ").append(new SdpManagement().getDevice()).append('\n');
        StackStatistics.Totals t = totals();
        b.append("--- totals\n");
        b.append("sdp: ").append(t == null ? "no stack" : t.toString()).append('\n');
        b.append("tcp fallbacks: ").append(SocketRegistry.fallbacks()).append(" bytesSent=").append(SocketRegistry.tcpSent())
            .append(" bytesReceived=").append(SocketRegistry.tcpReceived()).append('\n');
        b.append("spin: ").append(new SdpManagement().getSpinning()).append('\n');
        b.append("limits: ").append(new SdpManagement().getLimits()).append('\n');
        b.append("netty native transports: ").append(new SdpManagement().getNettyNativeTransports()).append('\n');
        List<SdpSocketInfo> sockets = SocketRegistry.describeAll();
        b.append("--- sockets (").append(sockets.size()).append(")\n");
        Set<Long> shown = new HashSet<>();
        for (SdpSocketInfo i : sockets) {
            b.append(i).append('\n');
        }
        SdpStack stack = SdpRuntime.stackIfOpen();
        List<SdpConnection> connections = stack == null ? List.of() : stack.connections();
        for (SdpSocketInfo i : sockets) {
            if (i.getConnectionId() < 0) {
                continue;
            }
            for (SdpConnection c : connections) {
                if (c.id() == i.getConnectionId()) {
                    b.append("--- socket ").append(i.getId()).append(": ");
                    b.append(c.snapshot());
                    shown.add(c.id());
                }
            }
        }
        for (SdpConnection c : connections) {
            if (!shown.contains(c.id())) {
                b.append("--- no socket (closing, or not accepted yet): ").append(c.snapshot());
            }
        }
        b.append("--- trace levels: ").append(Trace.describe()).append('\n');
        List<TraceRecord> history = Trace.flightRecorder().snapshot();
        long origin = System.nanoTime();
        b.append("--- flight recorder (").append(history.size()).append(" records, ")
            .append(Trace.flightRecorder().dropped()).append(" dropped)\n");
        for (TraceRecord r : history) {
            b.append(r.render(origin)).append('\n');
        }
        List<FfdcRecord> ffdc = Ffdc.recent();
        b.append("--- FFDC records in memory (").append(ffdc.size()).append(")\n");
        for (FfdcRecord r : ffdc) {
            b.append(r.render());
        }
        b.append("--- end\n");
        return b.toString();
    }

    static String version() {
        String v = SdpManagement.class.getPackage().getImplementationVersion();
        return v == null ? "(dev)" : v;
    }
}
