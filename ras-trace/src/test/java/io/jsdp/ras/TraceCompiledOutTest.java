package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code -Djsdp.trace.enabled=false}: no record goes anywhere, whatever the levels say (checked in a child JVM). */
@Timeout(60)
class TraceCompiledOutTest {

    /** The child: traces at every level with everything on, prints what reached the ring. */
    public static final class Child {
        private Child() {
        }

        /**
         * Entry point.
         *
         * @param args unused
         */
        public static void main(String[] args) {
            Trace.configure("*:9");
            TraceComponent t = Trace.component("child");
            t.record(TraceLevel.ERROR, "child.error", 1);
            t.message(TraceLevel.RARE, "child.rare", "a sentence");
            FfdcRecord r = Ffdc.capture("child", "child.TEST", "summary", "snapshot");
            System.out.println("enabled=" + Trace.enabled() + " on=" + t.on(TraceLevel.ERROR) + " ring="
                + Trace.flightRecorder().snapshot().size() + " history=" + r.history().size());
        }
    }

    private static String run(String enabled) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "-Djsdp.trace.enabled=" + enabled,
            Child.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        List<String> lines = out.lines().filter(l -> l.startsWith("enabled=")).toList();
        assertEquals(1, lines.size(), out);
        return lines.get(0);
    }

    @Test
    void recordsNothingWhenCompiledOutAndReachesTheRingOtherwise() throws Exception {
        assertEquals("enabled=false on=false ring=0 history=0", run("false"));
        String on = run("true");
        assertTrue(on.startsWith("enabled=true on=true ring="), on);
        assertTrue(!on.contains("ring=0 "), "with tracing compiled in the ring has the records: " + on);
    }
}
