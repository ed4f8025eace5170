package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.conformance.Connection;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The receiver-not-ready kick: a requester stalled for lack of a receive is retried at once, from the
 * responder's thread, when the responder posts one. The requester waits for each send to complete
 * before the next (so its own posts never retry a stalled send) and the responder's RNR timer is a
 * minute: a kick lost to a race shows as a message that does not arrive within the test's 10 s wait.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RnrKickRaceTest extends TwoDeviceTest {
    private static final int MESSAGES = 20_000;
    private static final int WINDOW = 16;
    private static final long SEED = System.nanoTime();

    @Test
    void receivesPostedAtRandomMomentsDeliverEverySendExactlyOnceInOrder() throws Exception {
        Connection.Options o = new Connection.Options().rnrRetry(7);
        o.attrsA().maxSendWr(WINDOW);
        o.attrsB().maxRecvWr(WINDOW).minRnrTimerNs(TimeUnit.MINUTES.toNanos(1));
        Connection c = connect(o);
        Endpoint requester = new Endpoint(c.qpA, c.cqA, c.mrA, WINDOW);
        Endpoint responder = new Endpoint(c.qpB, c.cqB, c.mrB, WINDOW);
        Workers.run(TimeUnit.SECONDS.toNanos(50),
            () -> {
                SplittableRandom random = new SplittableRandom(SEED);
                for (long i = 0; i < MESSAGES; i++) {
                    requester.send(i);
                    // Stop and wait: no later post runs a stalled send again, only the responder's kick does.
                    requester.awaitSends();
                    Workers.randomPause(random, 20_000);
                }
            },
            () -> {
                SplittableRandom random = new SplittableRandom(SEED + 1);
                long expected = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (expected < MESSAGES) {
                    // post at random moments: sometimes several receives, sometimes none, before polling;
                    // rarely more than a few ahead, so that sends keep finding none (with up to WINDOW ahead the
                    // responder ran so far ahead that a run could end with no send having found the queue empty)
                    int posts = random.nextInt(3);
                    int ahead = 1 + random.nextInt(random.nextInt(8) == 0 ? WINDOW : 3);
                    for (int k = 0; k < posts && responder.recvPosted < MESSAGES
                        && responder.recvPosted - responder.recvDone < ahead; k++) {
                        assertEquals(Errno.OK, responder.postRecv());
                    }
                    Workers.randomPause(random, 20_000);
                    responder.pollOnce();
                    while (responder.hasMessage()) {
                        assertEquals(expected, responder.receive(), "seed " + SEED);
                        expected++;
                        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    }
                    assertTrue(System.nanoTime() - deadline < 0, "message " + expected
                        + " did not arrive within 10 s of the previous one (a lost kick waits out the RNR timer); seed "
                        + SEED);
                }
            });
        assertEquals(MESSAGES, responder.recvDone, "seed " + SEED);
        assertTrue(raced(c), "the race was exercised: some sends found no receive (naks " + soft(c.qpA).rnrNaks()
            + ", marks " + soft(c.qpB).rnrMarks() + "; seed " + SEED + ")");
    }

    @Test
    void receivePostedJustAsASendFindsNoneAlwaysKicksTheSend() throws Exception {
        // Each round: one thread sends while no receive is posted, the other posts the receive at nearly
        // the same moment. Whichever wins, the message must arrive at once: the RNR timer is a minute.
        // On the direct path the requester itself finds the receive ring empty. Over wires the responder
        // decides, when one of its threads looks at the message, so the sending thread then polls the
        // responder's queue once, as a spinning application would: that look races the post.
        Connection.Options o = new Connection.Options().rnrRetry(7);
        o.attrsB().minRnrTimerNs(TimeUnit.MINUTES.toNanos(1));
        Connection c = connect(o);
        Endpoint requester = new Endpoint(c.qpA, c.cqA, c.mrA, WINDOW);
        Endpoint responder = new Endpoint(c.qpB, c.cqB, c.mrB, WINDOW);
        // Batches until a send has found no receive (on a loaded machine that can take more rounds).
        for (int batch = 0; batch < 5 && (batch == 0 || !raced(c)); batch++) {
            long base = requester.sendPosted;
            Workers.race(10_000, TimeUnit.SECONDS.toNanos(40), new Workers.Round() {
                @Override
                public void setUp(int i) {
                }

                @Override
                public void race(int racer) {
                    if (racer == 0) {
                        requester.send(requester.sendPosted);
                        responder.pollOnce();
                    } else {
                        assertEquals(Errno.OK, responder.postRecv());
                    }
                }

                @Override
                public void check(int i) {
                    assertEquals(base + i, responder.receive(), "round " + (base + i));
                    requester.awaitSends();
                }
            });
        }
        assertTrue(raced(c), "some rounds the send found no receive (RNR NAKs " + soft(c.qpA).rnrNaks()
            + ", RNR marks " + soft(c.qpB).rnrMarks() + ")");
    }

    /**
     * Whether a send found no receive: the requester saw an RNR NAK (in-JVM path), or the responder
     * marked a message RNR on its wire (the requester need not notice when a receive comes at once).
     */
    private static boolean raced(Connection c) {
        return soft(c.qpA).rnrNaks() > 0 || soft(c.qpB).rnrMarks() > 0;
    }
}
