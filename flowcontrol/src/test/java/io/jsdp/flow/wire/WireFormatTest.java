package io.jsdp.flow.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The flyweights put every field at the specification's offset, big-endian, whatever the buffer's order. */
@Timeout(10)
class WireFormatTest {

    @Test
    void bsdhFieldsAreBigEndianAtTheirOffsets() {
        ByteBuffer b = ByteBuffer.allocate(32).order(ByteOrder.LITTLE_ENDIAN);
        new Bsdh().wrap(b, 8).put(MessageId.DATA, Bsdh.FLAG_OOB_PEND, 0x0102, 0x03040506, 0x0708090A, 0x0B0C0D0E);
        byte[] expected = {(byte) 0xFF, 0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E};
        assertArrayEquals(expected, Arrays.copyOfRange(b.array(), 8, 24));
        Bsdh r = new Bsdh().wrap(b, 8);
        assertEquals(MessageId.DATA, r.mid());
        assertEquals(Bsdh.FLAG_OOB_PEND, r.flags());
        assertEquals(0x0102, r.bufs());
        assertEquals(0x03040506L, r.len());
        assertEquals(0x0708090A, r.mseq());
        assertEquals(0x0B0C0D0E, r.mseqAck());
    }

    @Test
    void sinkAvailHeaderPutsItsFieldsAfterTheBsdhBigEndian() {
        ByteBuffer b = ByteBuffer.allocate(8 + SinkAvailHeader.MESSAGE_LENGTH); // big-endian, as a Bsdh's view
        new SinkAvailHeader().wrap(b, 8).put(0xF0000001, 0x11223344, 0x0102030405060708L, 0xFFFFFFFE);
        byte[] expected = {(byte) 0xF0, 0, 0, 1, 0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8, (byte) 0xFF, (byte) 0xFF,
            (byte) 0xFF, (byte) 0xFE};
        assertArrayEquals(expected, Arrays.copyOfRange(b.array(), 8 + Bsdh.LENGTH, 8 + SinkAvailHeader.MESSAGE_LENGTH));
        SinkAvailHeader r = new SinkAvailHeader().wrap(b, 8);
        assertEquals(0xF0000001L, r.size(), "size is unsigned");
        assertEquals(0x11223344, r.rkey());
        assertEquals(0x0102030405060708L, r.addr());
        assertEquals(0xFFFFFFFE, r.nonDisc());
        assertEquals(36, SinkAvailHeader.MESSAGE_LENGTH);
    }

    @Test
    void unsignedFieldsReadUnsigned() {
        ByteBuffer b = ByteBuffer.allocate(16);
        new Bsdh().wrap(b, 0).put(0xFE, 0xFF, 0xFFFF, -1, -1, -2);
        Bsdh r = new Bsdh().wrap(b, 0);
        assertEquals(0xFE, r.mid());
        assertEquals(0xFFFF, r.bufs());
        assertEquals(0xFFFF_FFFFL, r.len());
        assertEquals(-1, r.mseq());
    }

    @Test
    void helloRoundTripsWithAddressesAndCapabilities() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(Hello.LENGTH);
        InetSocketAddress src = new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 4242);
        InetSocketAddress dst = new InetSocketAddress(InetAddress.getByName("10.9.8.7"), 80);
        new Hello().wrap(b, 0).put(1, 32_768, src, dst, 0x5);
        Hello h = new Hello().wrap(b, 0);
        assertEquals(1, h.majorVersion());
        assertEquals(4, h.ipVersion());
        assertEquals(1, h.maxAdverts());
        assertEquals(32_768, h.localRcvSize());
        assertEquals(4242, h.port());
        assertEquals(src.getAddress(), h.sourceAddress());
        assertEquals(0x5, h.capabilities());
        assertEquals(0x11, b.get(Hello.VERSION_OFFSET));
        assertArrayEquals(new byte[] {10, 1, 2, 3}, Arrays.copyOfRange(b.array(), 44, 48), "IPv4 in the last 4 of 16 bytes");
        assertArrayEquals(new byte[] {10, 9, 8, 7}, Arrays.copyOfRange(b.array(), 60, 64));
    }

    @Test
    void helloAckRoundTrips() {
        ByteBuffer b = ByteBuffer.allocate(HelloAck.LENGTH);
        new HelloAck().wrap(b, 0).put(1, 4096, 6, 0x3);
        HelloAck a = new HelloAck().wrap(b, 0);
        assertEquals(1, a.majorVersion());
        assertEquals(1, a.maxAdverts());
        assertEquals(4096, a.actualRcvSize());
        assertEquals(0x3, a.capabilities());
        assertEquals(0x60, b.get(HelloAck.IP_VERSION_OFFSET));
    }

    @Test
    void messageIdsAreNamedAndClassified() {
        assertEquals("DisConn", MessageId.name(MessageId.DISCONN));
        assertEquals("0x42", MessageId.name(0x42));
        assertEquals(true, MessageId.isDefined(MessageId.SRC_AVAIL));
        assertEquals(false, MessageId.isDefined(0x10));
        assertEquals(false, MessageId.isDefined(0xFC));
    }
}
