package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import java.lang.instrument.Instrumentation;
import java.nio.channels.spi.SelectorProvider;
import java.util.Map;
import java.util.Set;

/**
 * The {@code -javaagent:jsdp.jar} entry point ({@code java-nio-provider.md} §3.4). Before the
 * application's {@code main}: exports {@code sun.nio.ch} to jsdp (so it reaches the JDK's own provider
 * for what it delegates), makes {@link SdpSelectorProvider} the JVM-wide provider, checks that it is,
 * and turns Netty's native transports off unless told to keep them ({@link #NETTY_FORCE_NIO_PROP}).
 *
 * <p>It also installs the {@code java.net} socket factories ({@link SocketFactories}), so plain
 * {@code Socket}/{@code ServerSocket} code travels over jsdp too; when another factory is already set,
 * standard error says which sockets stay on the JDK.
 *
 * <p>It refuses, saying why on standard error, when another provider is already configured or
 * installed, and does nothing with the agent argument {@code off} or {@code JSDP_AGENT=off}. Agent
 * arguments: comma-separated {@code off}, {@code netty-native=keep} (as {@link #NETTY_FORCE_NIO_PROP}
 * {@code =false}), {@code sockets=keep}.
 */
public final class Agent {
    /** The JDK's system property naming the JVM-wide provider. */
    static final String PROVIDER_PROPERTY = "java.nio.channels.spi.SelectorProvider";

    /**
     * Property: whether the agent makes Netty's native transports (epoll, io_uring, kqueue), and those of
     * the copy of Netty shaded into grpc-netty-shaded, report themselves unavailable, so that Netty
     * (and gRPC) pick NIO, which goes through the provider. The native transports make their system calls
     * from C, past every Java hook, so under the agent they would silently stay on kernel TCP. A Netty
     * property the user set is left as it is.
     */
    public static final String NETTY_FORCE_NIO_PROP = "jsdp.agent.netty.forceNio";
    /** Default of {@link #NETTY_FORCE_NIO_PROP}: force NIO, so the application's sockets reach jsdp. */
    public static final boolean NETTY_FORCE_NIO_DEFAULT = true;

    /**
     * What Netty reads before it loads a native transport: {@code Epoll}, {@code KQueue} and
     * {@code IoUring} each report the cause "explicit disabled" when it is true.
     */
    static final String NETTY_NO_NATIVE = "io.netty.transport.noNative";
    /**
     * The same for grpc-netty-shaded: its relocation rewrote the property name with the package prefix
     * (seen in the shaded {@code Epoll}'s constant pool, grpc 1.85.1).
     */
    static final String GRPC_NETTY_NO_NATIVE = "io.grpc.netty.shaded.io.netty.transport.noNative";

    /**
     * What the agent did with Netty's native transports, for the MBean; null until (unless) the agent
     * installed jsdp. Written once by the premain thread, before the application's main.
     */
    private static volatile String nettyNativeTransports;

    private Agent() {
    }

    /**
     * What the agent did with Netty's native transports.
     *
     * @return e.g. {@code "forced to NIO (jsdp.agent.netty.forceNio): ..."}, or null when the agent did not
     *     install jsdp in this JVM
     */
    static String nettyNativeTransports() {
        return nettyNativeTransports;
    }

    /**
     * Installs jsdp.
     *
     * @param args the agent arguments
     * @param inst the instrumentation
     */
    public static void premain(String args, Instrumentation inst) {
        String result = install(args == null ? "" : args, inst);
        SdpRuntime.TRACE.message(io.jsdp.ras.TraceLevel.RARE, "agent.premain", "jsdp agent: " + result);
        if (result.startsWith("refused")) {
            System.err.println("jsdp agent: " + result);
        }
    }

    static String install(String args, Instrumentation inst) {
        Set<String> words = Set.of(args.split(","));
        if (words.contains("off") || "off".equalsIgnoreCase(System.getenv("JSDP_AGENT"))) {
            return "off (agent argument or JSDP_AGENT=off): the JVM keeps the JDK's sockets";
        }
        // read before anything changes, so a bad value stops the JVM with the JDK's sockets untouched
        boolean forceNio = booleanProp(NETTY_FORCE_NIO_PROP, NETTY_FORCE_NIO_DEFAULT) && !words.contains("netty-native=keep");
        String configured = System.getProperty(PROVIDER_PROPERTY);
        if (configured != null && !configured.equals(SdpSelectorProvider.class.getName())) {
            return "refused: " + PROVIDER_PROPERTY + " is already set to " + configured;
        }
        if (inst != null) {
            Module base = Object.class.getModule();
            inst.redefineModule(base, Set.of(), Map.of("sun.nio.ch", Set.of(Agent.class.getModule())), Map.of(), Set.of(),
                Map.of());
        }
        System.setProperty(PROVIDER_PROPERTY, SdpSelectorProvider.class.getName());
        SelectorProvider installed = SelectorProvider.provider();
        if (!(installed instanceof SdpSelectorProvider)) {
            return "refused: the JVM-wide SelectorProvider was already " + installed.getClass().getName()
                + " before the agent ran";
        }
        String netty = forceNio ? forceNettyNio()
            : "left alone (" + (words.contains("netty-native=keep") ? "agent argument netty-native=keep"
                : NETTY_FORCE_NIO_PROP + "=false") + "): an application on them stays on kernel TCP";
        nettyNativeTransports = netty;
        SdpRuntime.TRACE.message(io.jsdp.ras.TraceLevel.RARE, "agent.netty", "jsdp agent: netty native transports: " + netty);
        SelectorProvider jdk = JdkProvider.get();
        String sockets;
        if (words.contains("sockets=keep")) {
            sockets = "java.net sockets left to the JDK (sockets=keep)";
        } else {
            try {
                SocketFactories.install();
                sockets = "java.net Socket and ServerSocket on jsdp";
            } catch (java.io.IOException e) {
                // the NIO provider is in; plain java.net code stays on the JDK's sockets, said on stderr
                System.err.println("jsdp agent: java.net sockets: " + e.getMessage());
                sockets = "java.net sockets: " + e.getMessage();
            }
        }
        return "installed " + installed.getClass().getName() + " (delegating to " + jdk.getClass().getName() + "); "
            + sockets;
    }

    /**
     * Sets Netty's and grpc-netty-shaded's "no native transport" properties where the user has not. Netty
     * reads them once, when its {@code Epoll} (or {@code KQueue}, {@code IoUring}) class initializes,
     * which is after premain: the application's classes load from its main on.
     */
    private static String forceNettyNio() {
        StringBuilder b = new StringBuilder("forced to NIO (" + NETTY_FORCE_NIO_PROP + "):");
        for (String p : new String[] {NETTY_NO_NATIVE, GRPC_NETTY_NO_NATIVE}) {
            Object before = System.getProperties().putIfAbsent(p, "true");
            b.append(' ').append(p).append('=').append(before == null ? "true" : before + " (set by the user, kept)");
        }
        return b.toString();
    }

    /** A {@code true}/{@code false} system property, its default when unset; anything else fails naming it. */
    static boolean booleanProp(String name, boolean def) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return def;
        }
        return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + ": expected true or false, got '" + v + "'");
        };
    }
}
