package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.CompletionChannel;
import io.jsdp.verbs.RdmaDevice;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stack's service threads outlive a device that throws where it should not: the progress thread
 * whose wait threw (a device bug; DiSNI's channel once threw IndexOutOfBounds when a queue left it
 * during the wait) waits again, and the connections it carries keep moving.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressSupervisionTest {
    /** A's device: every completion event goes to the progress thread, whose first waits throw. */
    private static RdmaDevice faulty(SoftDevice real, AtomicInteger throwsLeft) {
        InvocationHandler h = (proxy, m, args) -> {
            if (m.getName().equals("createCompletionChannel")) {
                return channel((CompletionChannel) call(real, m, args), throwsLeft);
            }
            if (m.getName().equals("createCompletionQueue") && args[0] instanceof Proxy) {
                args[0] = ((Faulty) Proxy.getInvocationHandler(args[0])).real;
            }
            return call(real, m, args);
        };
        return (RdmaDevice) Proxy.newProxyInstance(RdmaDevice.class.getClassLoader(), new Class<?>[] {RdmaDevice.class}, h);
    }

    private static CompletionChannel channel(CompletionChannel real, AtomicInteger throwsLeft) {
        return (CompletionChannel) Proxy.newProxyInstance(CompletionChannel.class.getClassLoader(),
            new Class<?>[] {CompletionChannel.class}, new Faulty(real, throwsLeft));
    }

    private static Object call(Object target, Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static final class Faulty implements InvocationHandler {
        final CompletionChannel real;
        final AtomicInteger throwsLeft;

        Faulty(CompletionChannel real, AtomicInteger throwsLeft) {
            this.real = real;
            this.throwsLeft = throwsLeft;
        }

        @Override
        public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
            switch (m.getName()) {
                case "dispatchTo":
                    return false; // as on hardware: every event is the progress thread's
                case "await":
                    if (Thread.currentThread().getName().startsWith("jsdp-progress-") && throwsLeft.getAndDecrement() > 0) {
                        throw new IndexOutOfBoundsException("a device bug, injected");
                    }
                    return call(real, m, args);
                default:
                    return call(real, m, args);
            }
        }
    }

    @Test
    void aProgressThreadWhoseWaitThrewWaitsAgainAndMovesHeldData() throws Exception {
        AtomicInteger throwsLeft = new AtomicInteger(3);
        SoftDevice realA = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        SoftDevice realB = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        SdpStack stackA = SdpStack.open(faulty(realA, throwsLeft));
        SdpStack stackB = SdpStack.open(realB);
        try {
            SdpOptions o = new SdpOptions().bufferBytes(4096).receiveBuffers(3).sendBuffers(8)
                .flowControl(FlowControlScheme.CREDIT);
            SdpListener l = stackB.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4, o);
            SdpConnection a = stackA.connect(l.localAddress(), o);
            assertTrue(a.awaitConnected(TimeUnit.SECONDS.toNanos(10)), () -> a.failureDetail());
            SdpConnection b = l.accept(TimeUnit.SECONDS.toNanos(10));
            assertTrue(b != null, "accepted");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (throwsLeft.get() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertTrue(throwsLeft.get() <= 0, "the progress thread waited through the injected failures");
            // more than B's ring: the rest moves only when A's progress thread posts it as credits return
            long written = ProgressWithoutApplicationTest.fill(a);
            assertTrue(written > 3 * 4096, "written " + written);
            long read = ProgressWithoutApplicationTest.readUntilQuiet(b, 0);
            assertEquals(written, read, () -> "everything arrived without a call on the writer:\n" + a.snapshot());
            l.close();
        } finally {
            stackA.close();
            stackB.close();
            String leaks = realA.resources().checkLeaks() + realB.resources().checkLeaks();
            realA.close();
            realB.close();
            assertEquals("", leaks.replace("null", ""), "leaks");
        }
    }
}
