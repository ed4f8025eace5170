package io.jsdp.provider;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/** Whether a thread is virtual, on the JDK 21+ that have them; jsdp is built for release 17. */
final class VirtualThreads {
    /** {@code Thread.isVirtual()}, or null before JDK 21. */
    private static final MethodHandle IS_VIRTUAL = find();

    private VirtualThreads() {
    }

    private static MethodHandle find() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException before21) {
            return null;
        }
    }

    /**
     * Whether the current thread is virtual.
     *
     * @return true on a virtual thread
     */
    static boolean current() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
