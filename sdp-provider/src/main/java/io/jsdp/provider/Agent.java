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
 * and turns Netty's native transports off unless told to keep them (they would bypass every Java hook
 * and silently stay on kernel TCP).
 *
 * <p>It also installs the {@code java.net} socket factories ({@link SocketFactories}), so plain
 * {@code Socket}/{@code ServerSocket} code travels over jsdp too; when another factory is already set,
 * standard error says which sockets stay on the JDK.
 *
 * <p>It refuses, saying why on standard error, when another provider is already configured or
 * installed, and does nothing with the agent argument {@code off} or {@code JSDP_AGENT=off}. Agent
 * arguments: comma-separated {@code off}, {@code netty-native=keep}, {@code sockets=keep}.
 */
public final class Agent {
    /** The JDK's system property naming the JVM-wide provider. */
    static final String PROVIDER_PROPERTY = "java.nio.channels.spi.SelectorProvider";
    private static final String NETTY_NO_NATIVE = "io.netty.transport.noNative";
    private static final String GRPC_NETTY_NO_NATIVE = "io.grpc.netty.shaded.io.netty.transport.noNative";

    private Agent() {
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
        if (!words.contains("netty-native=keep")) {
            System.getProperties().putIfAbsent(NETTY_NO_NATIVE, "true");
            System.getProperties().putIfAbsent(GRPC_NETTY_NO_NATIVE, "true");
        }
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
}
