package io.jsdp.flow.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Socket-buffer sizes map onto buffer counts, and bad values fail naming what is wrong. */
@Timeout(10)
class SdpOptionsTest {

    @Test
    void soRcvbufAndSoSndbufMapOntoBufferCountsWithinTheLimits() {
        SdpOptions o = new SdpOptions().bufferBytes(4096);
        assertEquals(25, o.receiveBufferBytes(100_000).receiveBuffers(), "ceil(100000 / 4080)");
        assertEquals(SdpOptions.RECEIVE_BUFFERS_MIN, o.receiveBufferBytes(1).receiveBuffers());
        assertEquals(SdpOptions.BUFFERS_MAX, o.receiveBufferBytes(Integer.MAX_VALUE).receiveBuffers());
        assertEquals(2, o.sendBufferBytes(1).sendBuffers());
        assertEquals(3, o.sendBufferBytes(3 * 4080).sendBuffers());
    }

    @Test
    void valuesOutOfRangeAreRefusedWithTheirName() {
        SdpOptions o = new SdpOptions();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> o.receiveBuffers(2));
        assertTrue(e.getMessage().contains("receiveBuffers"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> o.bufferBytes(255));
        assertThrows(IllegalArgumentException.class, () -> o.bufferBytes(SdpOptions.BUFFER_BYTES_MAX + 1));
        assertThrows(IllegalArgumentException.class, () -> o.sendBuffers(SdpOptions.BUFFERS_MAX + 1));
        assertThrows(IllegalArgumentException.class, () -> o.receiveBufferBytes(0));
        assertThrows(IllegalArgumentException.class, () -> o.spinNs(-1));
    }

    @Test
    void badSystemPropertiesFailNamingTheProperty() {
        System.setProperty("jsdptest.int", "12x");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SdpOptions.intProp("jsdptest.int", 1, 0, 10));
            assertTrue(e.getMessage().startsWith("jsdptest.int: "), e.getMessage());
            System.setProperty("jsdptest.int", "11");
            e = assertThrows(IllegalArgumentException.class, () -> SdpOptions.intProp("jsdptest.int", 1, 0, 10));
            assertTrue(e.getMessage().contains("outside 0 … 10"), e.getMessage());
            System.setProperty("jsdptest.int", " 7 ");
            assertEquals(7, SdpOptions.intProp("jsdptest.int", 1, 0, 10));
        } finally {
            System.clearProperty("jsdptest.int");
        }
    }

    @Test
    void aBadBooleanPropertyFailsNamingIt() {
        System.setProperty("jsdptest.bool", "yes");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SdpOptions.booleanProp("jsdptest.bool", true));
            assertEquals("jsdptest.bool: expected true or false, got 'yes'", e.getMessage());
            System.setProperty("jsdptest.bool", " FALSE ");
            assertEquals(false, SdpOptions.booleanProp("jsdptest.bool", true));
            System.clearProperty("jsdptest.bool");
            assertEquals(true, SdpOptions.booleanProp("jsdptest.bool", true));
        } finally {
            System.clearProperty("jsdptest.bool");
        }
    }

    @Test
    void copiesAreIndependent() {
        SdpOptions a = new SdpOptions().noDelay(true).lingerSeconds(0).creditCoalesce(false);
        SdpOptions b = a.copy().noDelay(false).creditCoalesce(true);
        assertTrue(a.noDelay());
        assertEquals(0, b.lingerSeconds());
        assertEquals(false, a.creditCoalesce());
        assertEquals(true, new SdpOptions().creditCoalesce(), "coalescing is the default");
    }
}
