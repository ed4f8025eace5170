package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every case of {@link StreamChannelConformanceTest}, JDK TCP first, then jsdp with its SDP stack on
 * SoftRdma → DiSNI shim → DiSNI → verbs-disni ({@link DisniChain}): the same results.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DisniChainStreamChannelConformanceTest extends StreamChannelConformanceTest {
    @BeforeAll
    static void putTheProviderOnTheDisniChain() throws Exception {
        DisniChain.install();
    }

    @Test
    void jsdpEndsTalkSdpThroughTheDisniAdapter() throws Exception {
        SdpSelectorProvider jsdp = new SdpSelectorProvider();
        try (ServerSocketChannel s = jsdp.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             SocketChannel c = jsdp.openSocketChannel()) {
            assertTrue(c.connect(s.getLocalAddress()));
            try (SocketChannel a = s.accept()) {
                String t = c.getOption(SdpSocketOptions.TRANSPORT);
                assertTrue(t.startsWith("sdp") && t.endsWith("provider=disni"), t);
                assertEquals(t, a.getOption(SdpSocketOptions.TRANSPORT));
            }
        }
    }
}
