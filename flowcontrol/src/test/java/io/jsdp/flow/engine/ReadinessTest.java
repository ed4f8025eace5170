package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The notifications a selector will be built on: a readiness listener hears of arrivals, space and
 * the end without anyone polling, from the stack's threads; an accept listener hears of new
 * connections.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReadinessTest {

    @Test
    void aListenerHearsOfDataSpaceAndTheEndWithoutPolling() throws Exception {
        try (SdpPair p = SdpPair.open()) {
            BlockingQueue<Integer> seen = new ArrayBlockingQueue<>(1024);
            p.b.readinessListener((c, ops) -> seen.offer(ops));
            Integer first = seen.poll(5, TimeUnit.SECONDS); // the current readiness, on registration
            assertNotNull(first);
            assertEquals(0, first & SdpConnection.OP_READ, "nothing to read yet");
            Blocking.writeFully(p.a, ByteBuffer.wrap(new byte[] {1, 2, 3}));
            int ops;
            do {
                Integer next = seen.poll(5, TimeUnit.SECONDS);
                assertNotNull(next, "no notification of the data");
                ops = next;
            } while ((ops & SdpConnection.OP_READ) == 0);
            assertEquals(3, p.b.read(ByteBuffer.allocate(8)));
            p.a.close();
            do {
                Integer next = seen.poll(5, TimeUnit.SECONDS);
                assertNotNull(next, "no notification of the EOF");
                ops = next;
            } while ((ops & SdpConnection.OP_READ) == 0);
            assertEquals(SdpConnection.EOF, p.b.read(ByteBuffer.allocate(8)));
            p.b.readinessListener(null);
        }
    }

    @Test
    void anAcceptListenerHearsOfEachEstablishedConnection() throws Exception {
        try (SdpPair p = SdpPair.listening(new SdpOptions())) {
            CountDownLatch accepted = new CountDownLatch(3);
            p.listener.acceptListener(accepted::countDown);
            SdpConnection[] clients = new SdpConnection[3];
            for (int i = 0; i < clients.length; i++) {
                clients[i] = p.stackA.connect(p.listener.localAddress(), new SdpOptions());
            }
            assertTrue(accepted.await(10, TimeUnit.SECONDS));
            for (SdpConnection c : clients) {
                assertTrue(c.awaitConnected(TimeUnit.SECONDS.toNanos(5)));
                SdpConnection server = p.listener.accept();
                assertNotNull(server);
                c.close();
                server.close();
            }
        }
    }
}
