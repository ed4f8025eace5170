package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An FFDC record's log line has the level the capture asks for — ERROR unless told otherwise, RARE for a
 * failure the application sees as an orderly end — while the record itself is kept either way.
 */
@Timeout(10)
class FfdcLevelTest {
    private static int levelOfLastLine(String component) {
        List<TraceRecord> recent = Trace.flightRecorder().snapshot();
        for (int i = recent.size() - 1; i >= 0; i--) {
            TraceRecord r = recent.get(i);
            if (r.event().equals("ffdc." + component)) {
                return r.level();
            }
        }
        throw new AssertionError("no ffdc." + component + " record in the flight recorder");
    }

    @Test
    void theLogLineHasTheLevelAskedForAndTheRecordIsKept() {
        Ffdc.capture("leveltest", "test.DEFAULT", "summary", "snapshot");
        assertEquals(TraceLevel.ERROR, levelOfLastLine("leveltest"));
        assertFalse(Ffdc.find("test.DEFAULT", "summary").isEmpty());

        Ffdc.capture(TraceLevel.RARE, "leveltest", "test.RARE", "orderly end", "snapshot");
        assertEquals(TraceLevel.RARE, levelOfLastLine("leveltest"));
        assertFalse(Ffdc.find("test.RARE", "orderly end").isEmpty(), "kept whatever its log level");
    }
}
