package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.conformance.Connection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two threads bounce messages over one connection, each spinning on its own completion queue, and
 * check every message: nothing is lost, duplicated or reordered, and every byte arrives.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PingPongStressTest extends TwoDeviceTest {
    /** 100,000 SENDs each way. */
    private static final int ROUND_TRIPS = 100_000;
    private static final int WINDOW = 8;

    @Test
    void pingPongOf100kSendsLosesDuplicatesAndReordersNothing() throws Exception {
        Connection c = connect(new Connection.Options().rnrRetry(7));
        Endpoint a = new Endpoint(c.qpA, c.cqA, c.mrA, WINDOW);
        Endpoint b = new Endpoint(c.qpB, c.cqB, c.mrB, WINDOW);
        for (int i = 0; i < WINDOW; i++) {
            assertEquals(Errno.OK, a.postRecv());
            assertEquals(Errno.OK, b.postRecv());
        }
        Workers.run(TimeUnit.SECONDS.toNanos(50),
            () -> {
                for (long i = 0; i < ROUND_TRIPS; i++) {
                    a.send(i);
                    assertEquals(i, a.receive(), "the echo of message " + i);
                    assertEquals(Errno.OK, a.postRecv());
                }
            },
            () -> {
                for (long i = 0; i < ROUND_TRIPS; i++) {
                    assertEquals(i, b.receive(), "message " + i);
                    assertEquals(Errno.OK, b.postRecv());
                    b.send(i);
                }
            });
        assertEquals(ROUND_TRIPS, a.recvDone);
        assertEquals(ROUND_TRIPS, b.recvDone);
        Await.until(() -> {
            a.pollOnce();
            b.pollOnce();
            return a.sendDone == ROUND_TRIPS && b.sendDone == ROUND_TRIPS;
        }, "the last send completions");
        assertEquals(0, soft(c.qpA).rnrNaks() + soft(c.qpB).rnrNaks(), "receives were always posted in time");
    }
}
