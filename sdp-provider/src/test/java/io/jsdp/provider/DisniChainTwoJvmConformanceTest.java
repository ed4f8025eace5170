package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every case of {@link TwoJvmConformanceTest}, JDK TCP first, then jsdp with the SDP stacks of both JVMs
 * on SoftRdma → DiSNI shim → DiSNI → verbs-disni ({@link DisniChain}), the shims' SoftRdma devices
 * meeting over shared memory: the same results.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DisniChainTwoJvmConformanceTest extends TwoJvmConformanceTest {
    @BeforeAll
    static void putTheProviderOnTheDisniChain() throws Exception {
        DisniChain.install();
    }

    @Override
    String peerKind(String kind) {
        return kind.equals("jsdp") ? "jsdp-disni" : kind;
    }

    @Test
    void bothJvmsTalkSdpThroughTheDisniAdapter() throws Exception {
        try (PeerJvm peer = new PeerJvm("jsdp-disni")) {
            int port = Integer.parseInt(peer.call("LISTEN"));
            peer.send("ACCEPT");
            try (SocketChannel c = new SdpSelectorProvider().openSocketChannel()) {
                assertTrue(c.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)));
                String here = c.getOption(SdpSocketOptions.TRANSPORT);
                String there = peer.answer("ACCEPT");
                assertTrue(here.startsWith("sdp") && here.endsWith("provider=disni"), here);
                assertTrue(there.startsWith("sdp") && there.endsWith("provider=disni"), there);
            }
        }
    }
}
