package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import java.lang.reflect.Method;
import java.nio.channels.spi.SelectorProvider;

/**
 * The JDK's own provider, to which jsdp delegates every channel it does not accelerate. When jsdp is
 * not the JVM-wide provider, that is simply {@link SelectorProvider#provider()}; when it is, the JDK
 * offers no public way to the platform provider, so jsdp asks {@code sun.nio.ch.DefaultSelectorProvider}
 * — reachable when the agent exported {@code sun.nio.ch} to jsdp, or with
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} ({@code java-nio-provider.md} §3.3) — and,
 * on the class path without either, makes an instance of the platform's provider class.
 */
public final class JdkProvider {
    private JdkProvider() {
    }

    /** Initialized on first use, never from the provider's constructor (which runs inside provider()). */
    private static final class Holder {
        static final SelectorProvider INSTANCE = find();
    }

    /**
     * The JDK's provider.
     *
     * @return the platform provider
     * @throws IllegalStateException when jsdp is the JVM-wide provider and {@code sun.nio.ch} is not
     *     exported to it, saying how to fix that
     */
    public static SelectorProvider get() {
        return Holder.INSTANCE;
    }

    private static SelectorProvider find() {
        SelectorProvider system = SelectorProvider.provider();
        if (!(system instanceof SdpSelectorProvider)) {
            return system;
        }
        try {
            // exported to us by the agent, or by --add-exports java.base/sun.nio.ch=ALL-UNNAMED
            Class<?> c = Class.forName("sun.nio.ch.DefaultSelectorProvider");
            Method get = c.getMethod("get");
            return (SelectorProvider) get.invoke(null);
        } catch (ReflectiveOperationException | RuntimeException notExported) {
            return platformInstance(notExported);
        }
    }

    /**
     * On the class path without the agent: a fresh instance of the platform's provider class. The
     * class is loadable but not exported, and its constructor is out of reach; it has no state, so
     * jsdp allocates one without running a constructor (sun.misc.Unsafe, in the exported
     * jdk.unsupported module) and uses it through its public supertype only.
     */
    private static SelectorProvider platformInstance(Exception notExported) {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        String name = os.contains("linux") ? "sun.nio.ch.EPollSelectorProvider"
            : os.contains("mac") || os.contains("bsd") ? "sun.nio.ch.KQueueSelectorProvider"
            : os.contains("windows") ? "sun.nio.ch.WEPollSelectorProvider" : "sun.nio.ch.PollSelectorProvider";
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            java.lang.reflect.Field f = unsafeClass.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            Object unsafe = f.get(null);
            Object p = unsafeClass.getMethod("allocateInstance", Class.class).invoke(unsafe, Class.forName(name));
            return (SelectorProvider) p;
        } catch (ReflectiveOperationException | RuntimeException e) {
            IllegalStateException failure = new IllegalStateException("jsdp is the JVM-wide SelectorProvider but cannot reach "
                + "the JDK's own provider (" + name + ") for the channels it does not accelerate: start the JVM with "
                + "-javaagent:jsdp.jar, or add --add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
            failure.addSuppressed(notExported);
            throw failure;
        }
    }
}
