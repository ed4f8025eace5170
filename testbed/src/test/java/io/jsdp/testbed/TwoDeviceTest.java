package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.verbs.QueuePair;
import io.jsdp.verbs.conformance.Connection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the SoftRdma tests that connect two devices of this JVM: A (active) and B (passive). After each test the
 * fixture is closed, both devices must have nothing open, and no agent task may have failed.
 */
abstract class TwoDeviceTest {
    protected SoftDevice devA;
    protected SoftDevice devB;
    /** The test's connection, closed after the test. */
    protected Connection conn;

    @BeforeEach
    void openDevices() {
        devA = SoftDevice.open(ResourceTracker.Level.ALL, fabric());
        devB = SoftDevice.open(ResourceTracker.Level.ALL, fabric());
    }

    /**
     * The fabric both devices join. The default, the host fabric, connects them through wires as two
     * processes would be; subclasses named {@code ...InJvmFabricTest} run the same tests on the in-JVM
     * fabric, where the requester executes directly against the responder's queues.
     */
    protected SoftDevice.Fabric fabric() {
        return SoftDevice.Fabric.HOST;
    }

    @AfterEach
    void closeAndCheck() {
        try {
            devA.faults().clear();
            devB.faults().clear();
            if (conn != null) {
                conn.close();
            }
            assertEquals(0, devA.resources().openCount(), () -> devA.resources().report());
            assertEquals(0, devB.resources().openCount(), () -> devB.resources().report());
            assertNull(devA.agentFailure(), "an agent task of A threw");
            assertNull(devB.agentFailure(), "an agent task of B threw");
        } finally {
            devA.close();
            devB.close();
        }
    }

    protected Connection connect(Connection.Options o) throws Exception {
        conn = Connection.open(devA, devB, o);
        return conn;
    }

    protected static SoftQueuePair soft(QueuePair qp) {
        return (SoftQueuePair) qp;
    }
}
