package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.LeakRecord;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.Access;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.QueuePairAttributes;
import io.jsdp.verbs.RdmaDevice;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leak reports name the code that leaked (acceptance item): a queue pair left open is reported, by
 * {@code resources().report()} and by {@code close()}, with the test method that created it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LeakReportTest {

    /** Creates a queue pair through a CM id, two frames below the test method, and keeps nothing. */
    private static QueuePair openQueuePairAndForgetIt(RdmaDevice device) throws Exception {
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionQueue cq = device.createCompletionQueue(null, 16);
        CmEventChannel events = device.createEventChannel();
        CmId id = device.createId(events);
        return id.createQueuePair(pd, new QueuePairAttributes().sendCq(cq).recvCq(cq));
    }

    @Test
    void leakReportNamesTheTestMethodThatOpenedTheQueuePair() throws Exception {
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL);
        String closeLog;
        try {
            QueuePair leaked = openQueuePairAndForgetIt(device);
            String testMethod = "leakReportNamesTheTestMethodThatOpenedTheQueuePair";

            String report = device.resources().report();
            String qpEntry = entryOf(report, "QP");
            assertTrue(qpEntry.contains(testMethod), report);
            assertTrue(qpEntry.contains("openQueuePairAndForgetIt"), report);
            LeakRecord qp = qpRecord(device);
            assertTrue(qp.description().contains(String.valueOf(leaked.qpNumber())), qp.description());
            assertTrue(qp.allocationSite().stream().anyMatch(f -> f.getMethodName().equals(testMethod)),
                "the allocation stack reaches the test method: " + qp.allocationSite());

            closeLog = stderrOf(device::close);
            assertFalse(device.isOpen());
            assertTrue(entryOf(closeLog, "QP").contains(testMethod),
                "close() reports where the queue pair came from:\n" + closeLog);
            assertEquals(0, device.resources().openCount(), "close() released what it reported");
        } finally {
            device.close();
        }
    }

    @Test
    void checkLeaksReturnsTheReportWithTheCreatingMethod() throws Exception {
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL);
        try {
            openQueuePairAndForgetIt(device);
            String checked = device.resources().checkLeaks();
            assertTrue(checked.contains("QP") && checked.contains("checkLeaksReturnsTheReportWithTheCreatingMethod"),
                checked);
            // PD, CQ, CM channel, CM id, QP
            assertEquals(5, device.resources().openCount(), checked);
        } finally {
            device.close();
        }
        assertEquals("", device.resources().checkLeaks(), "nothing is left after close");
    }

    @Test
    void sampledTrackingKeepsTheOpenCountExact() throws Exception {
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.SAMPLED);
        try {
            assertEquals(ResourceTracker.Level.SAMPLED, device.resources().level());
            ProtectionDomain pd = device.allocateProtectionDomain();
            List<MemoryRegion> regions = new ArrayList<>();
            int interval = ResourceTracker.configuredSamplingInterval();
            // more than one sampling interval, so most records carry no stack
            int n = 3 * interval + 5;
            for (int i = 0; i < n; i++) {
                regions.add(pd.register(ByteBuffer.allocateDirect(64), Access.LOCAL_WRITE));
                assertEquals(i + 2, device.resources().openCount(), "PD plus " + (i + 1) + " regions");
            }
            QueuePair qp = openQueuePairAndForgetIt(device);
            int total = 1 + n + 5;
            assertEquals(total, device.resources().openCount());
            long withStack = device.resources().open().stream().filter(r -> !r.allocationSite().isEmpty()).count();
            assertEquals((total + interval - 1) / interval, withStack, "one stack per sampling interval");
            assertTrue(device.resources().report().contains("sampled out"), "unsampled records say so");
            for (int i = 0; i < n; i += 2) {
                regions.get(i).close();
            }
            assertEquals(n / 2 + 1 + 5, device.resources().openCount(), "every close counts, sampled or not");
            qp.close();
            assertEquals(n / 2 + 5, device.resources().openCount());
        } finally {
            device.close();
        }
        assertEquals(0, device.resources().openCount());
    }

    private static LeakRecord qpRecord(SoftDevice device) {
        List<LeakRecord> qps = device.resources().open().stream().filter(r -> r.kind().equals("QP")).toList();
        assertEquals(1, qps.size(), device.resources().report());
        return qps.get(0);
    }

    /**
     * The entry of the one resource of {@code kind} in a leak report: from its {@code #id KIND '} line
     * to the next entry. Fails when the report has none.
     */
    private static String entryOf(String report, String kind) {
        int start = report.indexOf(" " + kind + " '");
        assertTrue(start >= 0, "no " + kind + " in the report:\n" + report);
        int end = report.indexOf("\n  #", start);
        return report.substring(start, end < 0 ? report.length() : end);
    }

    /** What {@code action} writes to System.err, where slf4j-simple sends the leak log. */
    private static String stderrOf(Runnable action) {
        PrintStream saved = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(saved);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        saved.print(text);
        return text;
    }
}
