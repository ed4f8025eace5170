package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code jsdp.exitDrainMs} is read when a stack opens, with the other engine properties: a bad value
 * fails there, naming the property, instead of throwing inside the shutdown hook at exit (where the
 * drain was silently skipped). Each case forks a JVM with the property set, since the engine reads its
 * properties once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ExitDrainConfigurationTest {

    @ParameterizedTest
    @CsvSource({"soon, FAILED", "-1, FAILED", "0, OPENED", "2500, OPENED"})
    void aBadExitDrainBoundFailsWhenTheStackOpens(String value, String outcome) throws Exception {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
            "-Djsdp.exitDrainMs=" + value, "-cp", System.getProperty("java.class.path"), Probe.class.getName());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the probe did not end");
        } finally {
            p.destroyForcibly();
        }
        String line = out.lines().filter(l -> l.startsWith("OPENED") || l.startsWith("FAILED")).findFirst().orElse(out);
        assertTrue(line.startsWith(outcome), line);
        if (outcome.equals("FAILED")) {
            assertTrue(line.contains("jsdp.exitDrainMs") && line.contains(value), "names the property and the value: " + line);
        }
        assertEquals(0, p.exitValue(), out);
    }

    /** Opens a stack and says how it went. */
    static final class Probe {
        private Probe() {
        }

        public static void main(String[] args) throws IOException {
            SoftDevice d = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
            try {
                SdpStack.open(d).close();
                System.out.println("OPENED");
            } catch (Throwable t) {
                Throwable cause = t.getCause() != null ? t.getCause() : t;
                System.out.println("FAILED " + t.getClass().getSimpleName() + ": " + cause);
            } finally {
                d.close();
            }
        }
    }
}
