package io.jsdp.provider;

import com.sun.tools.attach.AttachNotSupportedException;
import com.sun.tools.attach.VirtualMachine;
import io.jsdp.SdpMXBean;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The jar's command line ({@code java -jar jsdp.jar ...}): {@code stat <pid>} lists the jsdp sockets of
 * a running JVM as {@code ss} does — endpoints, transport ({@code sdp}, or {@code tcp} with the
 * fallback's reason), flow control, state, credits, bytes — and {@code dump <pid> [file]} writes its
 * full snapshot (every SDP connection's state, the flight recorder, the FFDC records in memory);
 * {@code trace <pid> [levels]} shows, or changes, its trace levels ({@code jsdp.trace} syntax).
 *
 * <p>It attaches to the JVM ({@code com.sun.tools.attach}, same user), starts that JVM's local JMX
 * agent and reads the {@link SdpMXBean}: nothing must be prepared in the target beyond jsdp being
 * loaded. Exit codes: 0 done, 1 usage, 2 cannot attach, 3 the JVM has no jsdp MBean, 4 other failure.
 */
public final class DiagnosticsTool {
    /** Exit code: done. */
    public static final int OK = 0;
    /** Exit code: bad command line. */
    public static final int USAGE = 1;
    /** Exit code: no such JVM, or it refused the attach. */
    public static final int NO_ATTACH = 2;
    /** Exit code: the JVM runs no jsdp (no MBean {@value SdpMXBean#OBJECT_NAME}). */
    public static final int NO_JSDP = 3;
    /** Exit code: the JMX exchange failed. */
    public static final int FAILED = 4;

    private static final long MBEAN_WAIT_NS = TimeUnit.SECONDS.toNanos(2);

    private DiagnosticsTool() {
    }

    /**
     * Runs a command and exits with its code.
     *
     * @param args {@code stat <pid>}, {@code dump <pid> [file]}, {@code trace <pid> [levels]} or {@code help}
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs a command.
     *
     * @param args the command line
     * @param out where results go
     * @param err where errors go
     * @return the exit code
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
            usage(args.length == 0 ? err : out);
            return args.length == 0 ? USAGE : OK;
        }
        String command = args[0];
        boolean pidAndOptional = (command.equals("dump") || command.equals("trace")) && (args.length == 2 || args.length == 3);
        if (!(command.equals("stat") && args.length == 2 || pidAndOptional)) {
            usage(err);
            return USAGE;
        }
        String pid = args[1];
        if (!pid.matches("[0-9]+")) {
            err.println("jsdp: not a process id: " + pid);
            return USAGE;
        }
        java.util.Optional<ProcessHandle> process = ProcessHandle.of(Long.parseLong(pid));
        if (process.isEmpty() || !process.get().isAlive()) {
            err.println("jsdp: no process with pid " + pid);
            return NO_ATTACH;
        }
        // only JVMs the attach API lists: attaching to anything else would send it SIGQUIT, which kills a
        // process that is no JVM
        if (VirtualMachine.list().stream().noneMatch(d -> d.id().equals(pid))) {
            err.println("jsdp: pid " + pid + " is not a Java process this user can attach to (the attach API does not list"
                + " it; a JVM run with -XX:-UsePerfData is not listed either)");
            return NO_ATTACH;
        }
        String address;
        try {
            address = localJmxAddress(pid);
        } catch (AttachNotSupportedException | IOException | RuntimeException e) {
            err.println("jsdp: cannot attach to pid " + pid + ": " + e.getMessage());
            err.println("jsdp: is it a running Java process of this user? (a JVM started with -XX:+DisableAttachMechanism refuses)");
            return NO_ATTACH;
        }
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            MBeanServerConnection m = connector.getMBeanServerConnection();
            ObjectName name = new ObjectName(SdpMXBean.OBJECT_NAME);
            long deadline = System.nanoTime() + MBEAN_WAIT_NS;
            while (!m.isRegistered(name)) {
                if (System.nanoTime() > deadline) {
                    err.println("jsdp: pid " + pid + " has no jsdp MBean " + SdpMXBean.OBJECT_NAME
                        + ": jsdp is not loaded in that JVM, has opened no socket yet, or could not register the MBean"
                        + " (its trace says why: jmx.notRegistered)");
                    return NO_JSDP;
                }
                Thread.sleep(50);
            }
            String optional = args.length == 3 ? args[2] : null;
            return switch (command) {
                case "stat" -> stat(m, name, pid, out);
                case "dump" -> dump(m, name, pid, optional, out);
                default -> trace(m, name, pid, optional, out, err);
            };
        } catch (IOException | JMException | RuntimeException e) {
            err.println("jsdp: pid " + pid + ": " + e);
            return FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return FAILED;
        }
    }

    private static void usage(PrintStream s) {
        s.println("usage: java -jar jsdp.jar stat <pid>            list the jsdp sockets of a running JVM");
        s.println("       java -jar jsdp.jar dump <pid> [file]     write its full jsdp snapshot (stdout without a file)");
        s.println("       java -jar jsdp.jar trace <pid> [levels]  show or set its trace levels, e.g. '*:2,sdp:4'");
        s.println("exit codes: 0 done, 1 usage, 2 cannot attach, 3 no jsdp in that JVM, 4 other failure");
    }

    /** Attaches, starts the JVM's local JMX agent (a no-op when it runs) and returns its address. */
    private static String localJmxAddress(String pid) throws AttachNotSupportedException, IOException {
        VirtualMachine vm = VirtualMachine.attach(pid);
        try {
            return vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
    }

    private static int stat(MBeanServerConnection m, ObjectName name, String pid, PrintStream out)
        throws IOException, JMException {
        CompositeData[] sockets = (CompositeData[]) m.getAttribute(name, "Sockets");
        out.println("jsdp stat: pid " + pid + ", device " + m.getAttribute(name, "Device") + ", " + sockets.length
            + " socket" + (sockets.length == 1 ? "" : "s"));
        out.println("sdp: connections opened " + m.getAttribute(name, "SdpConnectionsOpened") + " established "
            + m.getAttribute(name, "SdpConnectionsEstablished") + " live " + m.getAttribute(name, "SdpConnectionsLive")
            + " released " + m.getAttribute(name, "SdpConnectionsReleased") + ", failures "
            + map((TabularData) m.getAttribute(name, "SdpFailures")) + "; bytes sent " + m.getAttribute(name, "BytesSent")
            + " received " + m.getAttribute(name, "BytesReceived") + "; credit stalls " + m.getAttribute(name, "CreditStalls")
            + " (" + TimeUnit.NANOSECONDS.toMillis((Long) m.getAttribute(name, "CreditStallNanos")) + " ms); rnr retries "
            + rnr((Long) m.getAttribute(name, "RnrRetries")) + "; zero-copy " + m.getAttribute(name, "ZeroCopyTransfers"));
        out.println("tcp: fallbacks " + map((TabularData) m.getAttribute(name, "Fallbacks")) + "; bytes sent "
            + m.getAttribute(name, "TcpBytesSent") + " received " + m.getAttribute(name, "TcpBytesReceived"));
        out.println("spin: " + m.getAttribute(name, "Spinning"));
        out.println("limits: " + m.getAttribute(name, "Limits"));
        out.println("netty native transports: " + m.getAttribute(name, "NettyNativeTransports"));
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"ID", "KIND", "TRANSPORT", "STATE", "LOCAL", "PEER", "FC", "CREDITS", "SENT", "RECEIVED",
            "RNR", "REASON"});
        for (CompositeData s : sockets) {
            String reason = (String) s.get("reason");
            String failure = (String) s.get("failure");
            rows.add(new String[] {String.valueOf(s.get("id")), (String) s.get("kind"), (String) s.get("transport"),
                (String) s.get("state"), dash((String) s.get("local")), dash((String) s.get("remote")),
                dash((String) s.get("flowControl")), num(((Integer) s.get("credits")).longValue()),
                num((Long) s.get("bytesSent")), num((Long) s.get("bytesReceived")),
                "sdp".equals(s.get("transport")) ? rnr((Long) s.get("rnrRetries")) : "-",
                !reason.isEmpty() ? reason : !failure.isEmpty() ? "failed: " + failure : "-"});
        }
        int[] width = new int[rows.get(0).length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length - 1; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < r.length - 1; i++) {
                b.append(r[i]).append(" ".repeat(width[i] - r[i].length() + 2));
            }
            out.println(b.append(r[r.length - 1]));
        }
        return OK;
    }

    private static int dump(MBeanServerConnection m, ObjectName name, String pid, String file, PrintStream out)
        throws IOException, JMException {
        String text = (String) m.invoke(name, "dump", new Object[0], new String[0]);
        if (file == null) {
            out.print(text);
        } else {
            Path p = Path.of(file);
            Files.writeString(p, text, StandardCharsets.UTF_8);
            out.println("jsdp dump of pid " + pid + " written to " + p.toAbsolutePath() + " (" + text.length() + " chars)");
        }
        return OK;
    }

    private static int trace(MBeanServerConnection m, ObjectName name, String pid, String levels, PrintStream out,
                             PrintStream err) throws IOException, JMException {
        if (levels != null) {
            try {
                m.setAttribute(name, new javax.management.Attribute("Trace", levels));
            } catch (javax.management.RuntimeMBeanException e) {
                err.println("jsdp: pid " + pid + " refused trace levels '" + levels + "': " + e.getCause().getMessage());
                return USAGE;
            }
        }
        out.println("jsdp trace levels of pid " + pid + ": " + m.getAttribute(name, "Trace"));
        return OK;
    }

    private static String dash(String s) {
        return s == null || s.isEmpty() ? "-" : s;
    }

    /** An RNR count: {@code n/a} where the device does not count them (DiSNI), never a made-up zero. */
    private static String rnr(long n) {
        return n < 0 ? "n/a" : Long.toString(n);
    }

    private static String num(long n) {
        return n < 0 ? "-" : Long.toString(n);
    }

    private static Map<String, Long> map(TabularData t) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Object row : t.values()) {
            CompositeData c = (CompositeData) row;
            m.put((String) c.get("key"), (Long) c.get("value"));
        }
        return m;
    }
}
