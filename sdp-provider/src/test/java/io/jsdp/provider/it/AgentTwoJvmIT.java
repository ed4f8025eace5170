package io.jsdp.provider.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The deployable jar, in two JVMs, with an application that knows nothing of jsdp ({@link EchoMain}):
 * with the agent on both sides the bytes travel over SDP; with jsdp on one side only both directions
 * still work over TCP and the jsdp side says why; and the class-path form
 * ({@code -Djava.nio.channels.spi.SelectorProvider=io.jsdp.SdpSelectorProvider}, no agent) works too.
 * Runs after {@code package}, so it uses {@code target/jsdp.jar} as users do.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AgentTwoJvmIT {
    private static final Path JAR = ForkedJvm.JAR;
    private static final int BYTES = 4 << 20;

    /** A forked JVM running {@link EchoMain}. */
    private static ForkedJvm jvm(List<String> jvmArgs, String... args) throws IOException {
        return jvm(EchoMain.class, jvmArgs, args);
    }

    /** A forked JVM running {@code main} with the test classes and the jsdp jar on its class path. */
    private static ForkedJvm jvm(Class<?> main, List<String> jvmArgs, String... args) throws IOException {
        return new ForkedJvm(ForkedJvm.command(main, "128m", jvmArgs, args));
    }

    private static List<String> agent() {
        return List.of("-javaagent:" + JAR);
    }

    private static List<String> classPathProvider() {
        return List.of("-Djava.nio.channels.spi.SelectorProvider=io.jsdp.SdpSelectorProvider");
    }

    /** Runs server and client; returns {server line, client line}. */
    private static String[] run(List<String> serverArgs, List<String> clientArgs) throws Exception {
        assertTrue(Files.isRegularFile(JAR), "build the jar first: " + JAR);
        try (ForkedJvm server = jvm(serverArgs, "server")) {
            String port = server.await("READY").split(" ")[1];
            try (ForkedJvm client = jvm(clientArgs, "client", port, Integer.toString(BYTES))) {
                String c = client.await("CLIENT");
                String s = server.await("SERVER");
                assertTrue(c.startsWith("CLIENT OK"), c);
                return new String[] {s, c};
            }
        }
    }

    @Test
    void withTheAgentOnBothSidesTheBytesTravelOverSdp() throws Exception {
        String[] r = run(agent(), agent());
        assertTrue(r[0].contains("io.jsdp.SdpSelectorProvider sdp"), r[0]);
        assertTrue(r[1].contains("io.jsdp.SdpSelectorProvider sdp"), r[1]);
    }

    @Test
    void aJsdpClientTalksTcpToAPlainServerAndSaysWhy() throws Exception {
        String[] r = run(List.of(), agent());
        assertTrue(r[0].startsWith("SERVER sun.nio.ch."), r[0]);
        assertTrue(r[1].contains("tcp_(no_SDP_listener_at"), r[1]);
    }

    @Test
    void aPlainClientReachesAJsdpServerOverTcp() throws Exception {
        String[] r = run(agent(), List.of());
        assertTrue(r[0].contains("io.jsdp.SdpSelectorProvider tcp_(the_peer_connected_over_TCP)"), r[0]);
        assertTrue(r[1].startsWith("CLIENT OK sun.nio.ch."), r[1]);
    }

    @Test
    void theClassPathFormWorksWithoutTheAgent() throws Exception {
        String[] r = run(classPathProvider(), classPathProvider());
        assertEquals(2, r.length);
        assertTrue(r[0].contains("io.jsdp.SdpSelectorProvider sdp"), r[0]);
        assertTrue(r[1].contains("io.jsdp.SdpSelectorProvider sdp"), r[1]);
    }

    @Test
    void aBindRuleForTcpKeepsTheServerOffSdpAndTheClientSaysWhy() throws Exception {
        Path rules = Files.createTempFile("jsdp", ".rules");
        try {
            Files.writeString(rules, "bind * * tcp   # this server stays on TCP\n");
            List<String> server = new ArrayList<>(agent());
            server.add("-Djsdp.rules=" + rules);
            String[] r = run(server, agent());
            assertTrue(r[0].contains("io.jsdp.SdpSelectorProvider tcp_(the_peer_connected_over_TCP)"), r[0]);
            assertTrue(r[1].contains("tcp_(no_SDP_listener_at"), r[1]);
        } finally {
            Files.deleteIfExists(rules);
        }
    }

    @Test
    void aBadRulesFileStopsTheJvmAtStartNamingTheRule() throws Exception {
        Path rules = Files.createTempFile("jsdp", ".rules");
        try {
            Files.writeString(rules, "# fine\nconnect * * rdma\n");
            List<String> args = new ArrayList<>(agent());
            args.add("-Djsdp.rules=" + rules);
            try (ForkedJvm jvm = jvm(args, "server")) {
                assertTrue(jvm.process.waitFor(60, TimeUnit.SECONDS));
                assertTrue(jvm.process.exitValue() != 0);
                Thread.sleep(200);
                String all = String.join("\n", jvm.lines);
                assertTrue(all.contains("jsdp.rules: " + rules + " line 2 'connect * * rdma': unknown transport 'rdma'"), all);
                assertTrue(!all.contains("READY"), all);
            }
        } finally {
            Files.deleteIfExists(rules);
        }
    }

    @Test
    void anUnmodifiedNettyEchoTravelsOverSdpWithTheAgentAndOverTcpWithout() throws Exception {
        for (boolean agentOnServer : new boolean[] {true, false}) {
            try (ForkedJvm server = jvm(NettyEchoMain.class, agentOnServer ? agent() : List.of(), "server")) {
                String port = server.await("READY").split(" ")[1];
                try (ForkedJvm client = jvm(NettyEchoMain.class, agent(), "client", port, Integer.toString(BYTES))) {
                    String c = client.await("CLIENT");
                    String s = server.await("SERVER");
                    if (agentOnServer) {
                        assertTrue(c.startsWith("CLIENT OK sdp"), c);
                        assertTrue(s.startsWith("SERVER sdp"), s);
                    } else {
                        assertTrue(c.startsWith("CLIENT OK tcp_(no_SDP_listener_at"), c);
                        assertEquals("SERVER -", s);
                    }
                }
            }
        }
    }

    @Test
    void plainJavaNetSocketsTravelOverSdpWithTheAgentAndOverTcpWithout() throws Exception {
        for (boolean agentOnServer : new boolean[] {true, false}) {
            try (ForkedJvm server = jvm(SocketEchoMain.class, agentOnServer ? agent() : List.of(), "server")) {
                String port = server.await("READY").split(" ")[1];
                try (ForkedJvm client = jvm(SocketEchoMain.class, agent(), "client", port, Integer.toString(BYTES))) {
                    String c = client.await("CLIENT");
                    String s = server.await("SERVER");
                    if (agentOnServer) {
                        assertTrue(c.startsWith("CLIENT OK sdp"), c);
                        assertTrue(s.startsWith("SERVER sdp"), s);
                    } else {
                        assertTrue(c.startsWith("CLIENT OK tcp_(no_SDP_listener_at"), c);
                        assertEquals("SERVER -", s);
                    }
                }
            }
        }
    }

    @Test
    void theJdksHttpClientAndHttpServerAndADatagramEchoWorkWithJsdpJvmWide() throws Exception {
        try (ForkedJvm http = jvm(DelegationMain.class, agent(), "http")) {
            assertEquals("PROVIDER io.jsdp.SdpSelectorProvider", http.await("PROVIDER"));
            for (int i = 0; i < 3; i++) {
                assertEquals("HTTP 200 hello over jsdp", http.await("HTTP"));
            }
        }
        try (ForkedJvm udp = jvm(DelegationMain.class, agent(), "udp")) {
            assertEquals("PROVIDER io.jsdp.SdpSelectorProvider", udp.await("PROVIDER"));
            assertEquals("UDP 5 selector=HybridSelector", udp.await("UDP"));
        }
    }
}
