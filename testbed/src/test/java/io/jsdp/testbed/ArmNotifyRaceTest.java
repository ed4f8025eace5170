package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.fail;

import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.WorkCompletion;
import io.jsdp.verbs.conformance.Connection;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * No lost wake-up between arming a completion queue and a completion arriving: a consumer that runs
 * the verbs idiom (poll until empty, arm, poll again, wait on the channel) while a producer thread
 * sends at random intervals must never wait on the channel for a completion that is already there.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ArmNotifyRaceTest extends TwoDeviceTest {
    private static final int MESSAGES = 20_000;
    private static final int WINDOW = 16;
    private static final long SEED = System.nanoTime();
    /** Generous: a wake-up that does not come within this is lost, not late. */
    private static final long AWAIT_NS = TimeUnit.SECONDS.toNanos(5);

    @Test
    void consumerThatPollsArmsPollsAndAwaitsNeverMissesAWakeup() throws Exception {
        Connection.Options o = new Connection.Options().rnrRetry(7);
        o.attrsA().maxSendWr(WINDOW);
        o.attrsB().maxRecvWr(WINDOW);
        Connection c = connect(o);
        Endpoint producer = new Endpoint(c.qpA, c.cqA, c.mrA, WINDOW);
        Endpoint consumer = new Endpoint(c.qpB, c.cqB, c.mrB, WINDOW);
        for (int i = 0; i < WINDOW; i++) {
            assertEquals(Errno.OK, consumer.postRecv());
        }
        long[] waits = new long[2]; // [0] waits on the channel, [1] completions found by the poll after arming
        Workers.run(TimeUnit.SECONDS.toNanos(50),
            () -> {
                SplittableRandom random = new SplittableRandom(SEED);
                for (long i = 0; i < MESSAGES; i++) {
                    producer.send(i);
                    Workers.randomPause(random, 50_000);
                }
                producer.awaitSends();
            },
            () -> {
                long expected = 0;
                while (expected < MESSAGES) {
                    if (consumer.pollOnce() == 0) {
                        assertEquals(Errno.OK, c.cqB.requestNotify(false));
                        if (consumer.pollOnce() > 0) {
                            waits[1]++; // the completion raced the arm: its event will come later, harmlessly
                        } else {
                            CompletionQueue fired = c.chB.await(AWAIT_NS);
                            if (fired == null) {
                                fail("lost wake-up: armed and empty, yet no event within 5 s; waiting for message "
                                    + expected + ", seed " + SEED);
                            }
                            assertSame(c.cqB, fired);
                            c.cqB.acknowledgeEvents(1);
                            waits[0]++;
                        }
                    }
                    while (consumer.hasMessage()) {
                        assertEquals(expected, consumer.receive(), "seed " + SEED);
                        expected++;
                        if (consumer.recvPosted < MESSAGES) {
                            assertEquals(Errno.OK, consumer.postRecv());
                        }
                    }
                }
            });
        assertEquals(MESSAGES, consumer.recvDone);
        assertEquals(true, waits[0] > 0, "the consumer did wait on the channel");
        // Events fired for completions the second poll already took may still be queued: take and ack them
        // so the completion queue can be destroyed.
        int late = 0;
        while (c.chB.await(0) != null) {
            late++;
        }
        c.cqB.acknowledgeEvents(late);
    }

    @Test
    void armingAgainstAConcurrentCompletionNeverLosesTheEvent() throws Exception {
        // Each round: one thread completes a request on A's queue while the other runs poll, arm, poll on
        // it. If the second poll found nothing, the completion came after the arm and must have fired.
        Connection c = connect(new Connection.Options());
        SendWorkRequest wr = new SendWorkRequest().opcode(Opcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
            .remote(c.mrB.address(), c.mrB.rkey()).sge(0, c.mrA.address(), 8, c.mrA.lkey());
        WorkCompletion[] wc = {new WorkCompletion()};
        boolean[] armed = new boolean[1];
        boolean[] foundAfterArm = new boolean[1];
        int[] found = new int[1];
        Workers.race(50_000, TimeUnit.SECONDS.toNanos(40), new Workers.Round() {
            @Override
            public void setUp(int i) {
                armed[0] = false;
                foundAfterArm[0] = false;
                found[0] = 0;
            }

            @Override
            public void race(int racer) {
                if (racer == 0) {
                    assertEquals(Errno.OK, c.qpA.postSend(wr));
                    return;
                }
                if ((found[0] = c.cqA.poll(wc, 1)) == 0) {
                    assertEquals(Errno.OK, c.cqA.requestNotify(false));
                    armed[0] = true;
                    foundAfterArm[0] = (found[0] = c.cqA.poll(wc, 1)) == 1;
                }
            }

            @Override
            public void check(int i) throws Exception {
                int events = 0;
                if (armed[0] && !foundAfterArm[0]) {
                    CompletionQueue fired = c.chA.await(TimeUnit.SECONDS.toNanos(1));
                    assertSame(c.cqA, fired, "round " + i + ": armed, polled empty, and the completion never woke us");
                    events++;
                }
                if (found[0] == 0) {
                    Await.one(c.cqA, wc);
                }
                while (c.chA.await(0) != null) {
                    events++;
                }
                if (armed[0] && events == 0) {
                    // The completion beat the arm, which is still set: spend it so the next round starts disarmed.
                    assertEquals(Errno.OK, c.qpA.postSend(wr));
                    assertSame(c.cqA, c.chA.await(TimeUnit.SECONDS.toNanos(1)), "round " + i + ": the arm held");
                    events++;
                    Await.one(c.cqA, wc);
                }
                c.cqA.acknowledgeEvents(events);
            }
        });
    }
}
