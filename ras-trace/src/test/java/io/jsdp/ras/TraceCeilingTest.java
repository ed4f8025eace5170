package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JVM-wide ceiling that lets compiled code fold hot-path guards away at the default levels (issue 10):
 * it follows run-time level changes both ways, and a guard compiled while it was folded takes a raised
 * level at once. Checked in a child JVM, so no other test's components hold the ceiling up.
 */
@Timeout(60)
class TraceCeilingTest {

    /** The child: prints the ceiling and what a hot, compiled guard returns as the levels change. */
    public static final class Child {
        private Child() {
        }

        /** A loop the JIT compiles with the guard of a hot-path record in it. */
        static int hotGuards(TraceComponent t, int n) {
            int on = 0;
            for (int i = 0; i < n; i++) {
                if (t.on(TraceLevel.HOT_INTERNALS)) {
                    on++;
                }
            }
            return on;
        }

        private static String state(String step, TraceComponent hot, TraceComponent other) {
            int on = 0;
            for (int round = 0; round < 50; round++) {
                on = hotGuards(hot, 20_000);
            }
            return step + " ceiling=" + TraceComponent.ceiling() + " hot=" + on + " other=" + hotGuards(other, 1000);
        }

        /**
         * Entry point.
         *
         * @param args unused
         */
        public static void main(String[] args) {
            TraceComponent hot = Trace.component("hot");
            TraceComponent other = Trace.component("other");
            System.out.println(state("default", hot, other));
            Trace.configure("*:2,hot:8");
            System.out.println(state("raised", hot, other));
            Trace.configure("*:2");
            System.out.println(state("lowered", hot, other));
            hot.level(TraceLevel.DATA);
            System.out.println(state("component", hot, other));
            hot.level(TraceLevel.OFF);
            System.out.println(state("off", hot, other));
        }
    }

    @Test
    void ceilingFollowsLevelChangesAndCompiledGuardsTakeThem() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), "-Djsdp.trace=*:2",
            Child.class.getName()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        List<String> lines = out.lines().filter(l -> l.contains(" ceiling=")).toList();
        assertEquals(List.of(
            "default ceiling=2 hot=0 other=0",
            "raised ceiling=8 hot=20000 other=0",
            "lowered ceiling=2 hot=0 other=0",
            "component ceiling=9 hot=20000 other=0",
            "off ceiling=2 hot=0 other=0"), lines, out);
    }
}
