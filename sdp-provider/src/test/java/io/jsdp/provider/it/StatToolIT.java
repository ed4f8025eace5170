package io.jsdp.provider.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 10, acceptance 2: {@code java -jar target/jsdp.jar stat <pid>} against a JVM that runs jsdp as
 * an agent with SDP connections (a {@code java.net} client and server of its own) and a TCP fallback
 * (to a plain JDK server in another JVM), parsed: endpoints, transport, reason, state, bytes. Also
 * {@code dump}, and the tool's answers for a JVM without jsdp, a pid that is no JVM and a bad command.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StatToolIT {
    private static final Path JAR = Path.of("target", "jsdp.jar").toAbsolutePath();
    private static final String TEST_CLASSES = Path.of("target", "test-classes").toAbsolutePath().toString();
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    private record Result(int exit, String out, String err) {
    }

    /** Runs {@code java -jar target/jsdp.jar args...} as a user would. */
    private static Result tool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(JAVA, "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("jsdp-tool", ".out");
        Path err = Files.createTempFile("jsdp-tool", ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the tool hung: " + cmd);
            return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private static Map<String, String> fields(String line) {
        Map<String, String> m = new HashMap<>();
        for (String w : line.split(" ")) {
            int eq = w.indexOf('=');
            if (eq > 0) {
                m.put(w.substring(0, eq), w.substring(eq + 1));
            }
        }
        return m;
    }

    /** The table rows of {@code stat}: column name to value, the reason (which has spaces) last. */
    private static List<Map<String, String>> rows(String out) {
        List<String> lines = out.lines().toList();
        int header = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("ID ")) {
                header = i;
            }
        }
        assertTrue(header >= 0, out);
        String[] names = lines.get(header).trim().split("\\s+");
        List<Map<String, String>> rows = new ArrayList<>();
        for (String l : lines.subList(header + 1, lines.size())) {
            String[] v = l.trim().split("\\s+", names.length);
            assertEquals(names.length, v.length, "row: " + l);
            Map<String, String> row = new HashMap<>();
            for (int i = 0; i < names.length; i++) {
                row.put(names[i], v[i]);
            }
            rows.add(row);
        }
        return rows;
    }

    private static Map<String, String> row(List<Map<String, String>> rows, String column, String value, String out) {
        for (Map<String, String> r : rows) {
            if (value.equals(r.get(column))) {
                return r;
            }
        }
        throw new AssertionError("no row with " + column + "=" + value + " in\n" + out);
    }

    @Test
    void statListsSdpAndFallbackConnectionsAndDumpWritesTheSnapshot(@TempDir Path dir) throws Exception {
        assertTrue(Files.isRegularFile(JAR), "build the jar first: " + JAR);
        try (ForkedJvm plain = new ForkedJvm(List.of(JAVA, "-Xmx64m", "-cp", TEST_CLASSES, StatChildMain.class.getName(), "plain"))) {
            String plainPort = plain.await("READY").split(" ")[1];
            try (ForkedJvm app = new ForkedJvm(List.of(JAVA, "-Xmx128m", "-javaagent:" + JAR,
                "-cp", TEST_CLASSES + File.pathSeparator + JAR, StatChildMain.class.getName(), "app", plainPort))) {
                Map<String, String> ready = fields(app.await("READY"));
                String lo = "127.0.0.1:";
                String server = lo + ready.get("serverPort");
                String client = lo + ready.get("clientLocalPort");
                String fallbackLocal = lo + ready.get("fallbackLocalPort");
                String plainServer = lo + plainPort;

                Result stat = tool("stat", Long.toString(app.process.pid()));
                assertEquals(0, stat.exit(), stat.err() + stat.out());
                String out = stat.out();
                assertTrue(out.startsWith("jsdp stat: pid " + app.process.pid() + ", device soft"), out);
                assertTrue(out.contains("tcp: fallbacks {no-listener=1"), out);
                assertTrue(out.contains("\nnetty native transports: forced to NIO (jsdp.agent.netty.forceNio): "
                    + "io.netty.transport.noNative=true io.grpc.netty.shaded.io.netty.transport.noNative=true\n"), out);
                assertTrue(out.contains("; rnr retries 0;"), "SoftRdma counts them; credit-based flow control makes none: " + out);
                assertTrue(out.contains("\nspin: adaptive, "), "the spinning mode and what decided it: " + out);
                assertTrue(out.contains("\nlimits: connections 2/16384, in set-up 0/256; connects over the limits 0, requests refused 0\n"),
                    "the caps, the application's two SDP ends held: " + out);
                List<Map<String, String>> rows = rows(out);
                // the application's: a listener, two SDP ends, a TCP fallback; the JMX agent the tool started
                // listens through jsdp too (the agent installed the socket factories), so its listener and the
                // tool's own connection ("the peer connected over TCP") are there as well
                assertEquals(1, rows.stream().filter(r -> r.get("KIND").equals("listen") && r.get("LOCAL").equals(server)).count(), out);
                assertEquals(2, rows.stream().filter(r -> r.get("TRANSPORT").equals("sdp")).count(), out);
                assertEquals(1, rows.stream().filter(r -> r.get("REASON").startsWith("no SDP listener")).count(), out);

                Map<String, String> listener = row(rows, "KIND", "listen", out);
                assertEquals("sdp+tcp", listener.get("TRANSPORT"));
                assertEquals("LISTEN", listener.get("STATE"));
                assertEquals(server, listener.get("LOCAL"));

                Map<String, String> up = row(rows, "LOCAL", client, out);
                assertEquals("sdp", up.get("TRANSPORT"));
                assertEquals("ESTABLISHED", up.get("STATE"));
                assertEquals(server, up.get("PEER"));
                assertEquals("credit", up.get("FC"));
                assertTrue(Integer.parseInt(up.get("CREDITS")) > 0, out);
                assertEquals(Integer.toString(StatChildMain.SDP_UP), up.get("SENT"));
                assertEquals(Integer.toString(StatChildMain.SDP_DOWN), up.get("RECEIVED"));
                assertEquals("0", up.get("RNR"));
                assertEquals("-", up.get("REASON"));

                Map<String, String> down = row(rows, "PEER", client, out);
                assertEquals("sdp", down.get("TRANSPORT"));
                assertEquals("ESTABLISHED", down.get("STATE"));
                assertEquals(server, down.get("LOCAL"));
                assertEquals(Integer.toString(StatChildMain.SDP_DOWN), down.get("SENT"));
                assertEquals(Integer.toString(StatChildMain.SDP_UP), down.get("RECEIVED"));

                Map<String, String> tcp = row(rows, "PEER", plainServer, out);
                assertEquals("tcp", tcp.get("TRANSPORT"));
                assertEquals("stream", tcp.get("KIND"));
                assertEquals("ESTABLISHED", tcp.get("STATE"));
                assertEquals(fallbackLocal, tcp.get("LOCAL"));
                assertEquals(plainServer, tcp.get("PEER"));
                assertEquals("-", tcp.get("FC"));
                assertEquals("-", tcp.get("CREDITS"));
                assertEquals("-", tcp.get("RNR"));
                assertEquals(Integer.toString(StatChildMain.TCP_UP), tcp.get("SENT"));
                assertEquals(Integer.toString(StatChildMain.TCP_DOWN), tcp.get("RECEIVED"));
                assertTrue(tcp.get("REASON").matches("no SDP listener at (localhost)?/" + plainServer), tcp.get("REASON"));

                Path file = dir.resolve("dump.txt");
                Result dump = tool("dump", Long.toString(app.process.pid()), file.toString());
                assertEquals(0, dump.exit(), dump.err() + dump.out());
                assertTrue(dump.out().contains("written to " + file.toAbsolutePath()), dump.out());
                String text = Files.readString(file);
                assertTrue(text.startsWith("jsdp dump: pid " + app.process.pid()), text);
                assertTrue(text.contains("--- sockets ("), text);
                assertTrue(text.matches("(?s).*connection \\d+ active device soft.*"), text);
                assertTrue(text.matches("(?s).*connection \\d+ passive device soft.*"), text);
                assertTrue(text.contains(" rnrRetries=0"), text);
                assertTrue(text.contains("--- flight recorder ("), text);
                assertTrue(text.contains("--- FFDC records in memory ("), text);
                assertTrue(text.contains("/" + plainServer), text);

                Result toStdout = tool("dump", Long.toString(app.process.pid()));
                assertEquals(0, toStdout.exit(), toStdout.err());
                assertTrue(toStdout.out().startsWith("jsdp dump: pid "), toStdout.out());

                Result traceNow = tool("trace", Long.toString(app.process.pid()));
                assertEquals(0, traceNow.exit(), traceNow.err());
                assertEquals("jsdp trace levels of pid " + app.process.pid() + ": *:2", traceNow.out().trim());
                Result traceSet = tool("trace", Long.toString(app.process.pid()), "*:2,sdp:4");
                assertEquals(0, traceSet.exit(), traceSet.err());
                assertTrue(traceSet.out().trim().endsWith(": *:2,sdp:4"), traceSet.out());
                Result traceBad = tool("trace", Long.toString(app.process.pid()), "sdp:x");
                assertEquals(1, traceBad.exit(), traceBad.out());
                assertTrue(traceBad.err().contains("refused trace levels 'sdp:x'"), traceBad.err());
            }

            Result noJsdp = tool("stat", Long.toString(plain.process.pid()));
            assertEquals(3, noJsdp.exit(), noJsdp.err() + noJsdp.out());
            assertTrue(noJsdp.err().contains("has no jsdp MBean io.jsdp:type=Sdp"), noJsdp.err());
        }
    }

    @Test
    void aJvmWithoutJavaManagementLosesTheMBeanNotItsConnections() throws Exception {
        try (ForkedJvm app = new ForkedJvm(List.of(JAVA, "-Xmx64m", "--limit-modules", "java.base,jdk.jfr,jdk.unsupported",
            "-Djava.nio.channels.spi.SelectorProvider=io.jsdp.SdpSelectorProvider",
            "-cp", TEST_CLASSES + File.pathSeparator + JAR, StatChildMain.class.getName(), "nio"))) {
            String ready = app.await("READY");
            assertTrue(ready.startsWith("READY sdp"), ready + " " + app.transcript);
            Result stat = tool("stat", Long.toString(app.process.pid()));
            assertEquals(3, stat.exit(), stat.err() + stat.out());
        }
    }

    @Test
    void theToolSaysWhatIsWrongWithExitCodes() throws Exception {
        Process gone = new ProcessBuilder(JAVA, "-version").redirectErrorStream(true).start();
        gone.getInputStream().readAllBytes();
        assertTrue(gone.waitFor(30, TimeUnit.SECONDS));
        Result noProcess = tool("stat", Long.toString(gone.pid()));
        assertEquals(2, noProcess.exit(), noProcess.err() + noProcess.out());
        assertTrue(noProcess.err().contains("no process with pid " + gone.pid()), noProcess.err());

        Process sleeper = new ProcessBuilder("sleep", "60").start();
        try {
            Result noJvm = tool("stat", Long.toString(sleeper.pid()));
            assertEquals(2, noJvm.exit(), noJvm.err() + noJvm.out());
            assertTrue(noJvm.err().contains("pid " + sleeper.pid() + " is not a Java process"), noJvm.err());
            assertTrue(sleeper.isAlive(), "no SIGQUIT reached the process that is no JVM");
        } finally {
            sleeper.destroyForcibly();
        }

        Result usage = tool();
        assertEquals(1, usage.exit());
        assertTrue(usage.err().contains("usage: java -jar jsdp.jar stat <pid>"), usage.err());
        Result bad = tool("stat", "notapid");
        assertEquals(1, bad.exit());
        assertNotNull(bad.err());
        assertTrue(bad.err().contains("not a process id"), bad.err());
    }
}
