package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import java.lang.reflect.Method;
import java.nio.channels.spi.SelectorProvider;

/**
 * The JDK's own provider, to which jsdp delegates every channel it does not accelerate. When jsdp is
 * not the JVM-wide provider, that is simply {@link SelectorProvider#provider()}; when it is, the JDK
 * offers no public way to the platform provider, so jsdp asks {@code sun.nio.ch.DefaultSelectorProvider}
 * — reachable when the agent exported {@code sun.nio.ch} to jsdp, or with
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} ({@code java-nio-provider.md} §3.3).
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
            Class<?> c = Class.forName("sun.nio.ch.DefaultSelectorProvider");
            Method get = c.getMethod("get");
            return (SelectorProvider) get.invoke(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("jsdp is the JVM-wide SelectorProvider but cannot reach the JDK's own provider "
                + "for the channels it does not accelerate: start the JVM with -javaagent:jsdp.jar (which exports "
                + "sun.nio.ch to jsdp) or add --add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }
}
