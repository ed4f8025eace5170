package io.jsdp.provider;

import java.lang.reflect.Method;

/** Virtual threads for tests built with --release 17: made reflectively, only on JDK 21+. */
final class VirtualThreadsForTests {
    private VirtualThreadsForTests() {
    }

    /**
     * Whether this JDK has virtual threads.
     *
     * @return true on JDK 21+
     */
    static boolean available() {
        return Runtime.version().feature() >= 21;
    }

    /**
     * Why tests of virtual threads are skipped here.
     *
     * @return the reason
     */
    static String skipReason() {
        return "virtual threads need JDK 21+, this is " + Runtime.version();
    }

    /**
     * Starts {@code task} in a new virtual thread ({@code Thread.ofVirtual().start(task)}).
     *
     * @param task what it runs
     * @return the started thread
     */
    static Thread start(Runnable task) {
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
            return (Thread) start.invoke(builder, task);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(skipReason(), e);
        }
    }
}
