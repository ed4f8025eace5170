package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.FlowControlScheme;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 8, acceptance 1: every pair of client and server wishes. The connection uses the scheme when
 * both ask for the same, else credit-based — both ends agree, each reports it — and a stream each way
 * arrives intact and the connection ends gracefully.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NegotiationMatrixTest {
    static Stream<Arguments> pairs() {
        List<Arguments> all = new ArrayList<>();
        for (FlowControlScheme client : FlowControlScheme.values()) {
            for (FlowControlScheme server : FlowControlScheme.values()) {
                all.add(Arguments.of(client, server));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "client {0}, server {1}")
    @MethodSource("pairs")
    void bothEndsUseTheAgreedSchemeAndStreamIntact(FlowControlScheme client, FlowControlScheme server) throws Exception {
        SdpOptions c = new SdpOptions().bufferBytes(8192).receiveBuffers(4).sendBuffers(4).flowControl(client);
        SdpOptions s = new SdpOptions().bufferBytes(8192).receiveBuffers(4).sendBuffers(4).flowControl(server);
        FlowControlScheme expected = client == server ? client : FlowControlScheme.CREDIT;
        try (SdpPair p = SdpPair.open(c, s)) {
            assertEquals(expected, p.a.flowControlScheme(), "client");
            assertEquals(expected, p.b.flowControlScheme(), "server");
            assertEquals(expected.configName(), p.a.flowControl());
            assertTrue(p.a.snapshot().contains("flow scheme=" + expected.configName()), p.a.snapshot());
            long total = 16L << 20;
            Future<StreamCheck.Result> aw = TestThreads.POOL.submit(() -> StreamCheck.write(p.a, total, 1 << 16, 21, true));
            Future<StreamCheck.Result> bw = TestThreads.POOL.submit(() -> StreamCheck.write(p.b, total, 1 << 16, 22, false));
            Future<StreamCheck.Result> ar = TestThreads.POOL.submit(() -> StreamCheck.read(p.a, 1 << 16, 23));
            Future<StreamCheck.Result> br = TestThreads.POOL.submit(() -> StreamCheck.read(p.b, 1 << 16, 24));
            StreamCheck.Result written = aw.get(30, TimeUnit.SECONDS);
            StreamCheck.Result read = br.get(30, TimeUnit.SECONDS);
            assertEquals(written.bytes(), read.bytes());
            assertEquals(written.crc(), read.crc());
            written = bw.get(30, TimeUnit.SECONDS);
            read = ar.get(30, TimeUnit.SECONDS);
            assertEquals(written.bytes(), read.bytes());
            assertEquals(written.crc(), read.crc());
            p.a.close();
            p.b.close();
            assertTrue(p.a.awaitReleased(TimeUnit.SECONDS.toNanos(10)), p.a.snapshot());
            assertTrue(p.b.awaitReleased(TimeUnit.SECONDS.toNanos(10)), p.b.snapshot());
            assertNull(p.a.failure(), p.a::failureDetail);
            assertNull(p.b.failure(), p.b::failureDetail);
            assertEquals(SdpConnection.CLOSED, p.a.read(ByteBuffer.allocate(1)));
        }
    }
}
