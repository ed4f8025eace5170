package io.jsdp.testbed.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** NodeId: the canonical token, and liveness that a recycled pid cannot fool. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class NodeIdTest {

    @Test
    void tokenRoundTripsThroughParse() {
        NodeId me = NodeId.current();
        assertEquals(ProcessHandle.current().pid(), me.pid());
        assertEquals(me, NodeId.parse(me.token()));
        assertEquals(new NodeId(42, 0), NodeId.parse("42-0"));
    }

    @Test
    void parseRejectsAnythingButTheCanonicalForm() {
        for (String bad : new String[] {"", "-", "12", "12-", "-12", "0-5", "12-3-4", "+12-3", "12-+3", "012-3", "12-03",
            "12--3", "a-1", "1-b", "99999999999999999999-1", " 12-3"}) {
            assertNull(NodeId.parse(bad), bad);
        }
    }

    @Test
    void componentsMustBeInRange() {
        assertThrows(IllegalArgumentException.class, () -> new NodeId(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new NodeId(1, -1));
    }

    @Test
    void currentProcessIsAliveAndAStaleStartStampIsNot() {
        NodeId me = NodeId.current();
        assertTrue(me.isAlive());
        // Same pid, other start: what a recycled pid looks like to the owner of an old file.
        assertFalse(new NodeId(me.pid(), me.start() + 1_000_000).isAlive());
    }

    @Test
    void exitedProcessIsDead() throws Exception {
        Process p = new ProcessBuilder(System.getProperty("java.home") + "/bin/java", "-version")
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        NodeId child = new NodeId(p.pid(), 0); // start unknown: liveness rests on the pid alone
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertFalse(child.isAlive());
    }
}
