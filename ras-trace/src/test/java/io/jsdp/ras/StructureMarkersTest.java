package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link StructureMarkers}: layout, placing, checking and the report of a broken marker. */
@Timeout(10)
class StructureMarkersTest {
    private static final int BUFFERS = 4;
    private static final int BYTES = 32;
    private static final int BASE = 16;

    private ByteBuffer region() {
        ByteBuffer b = ByteBuffer.allocateDirect(BASE + StructureMarkers.regionBytes(BUFFERS, BYTES));
        StructureMarkers.place(b, BASE, BUFFERS, BYTES);
        return b;
    }

    @Test
    void buffersAndMarkersTileTheRegionWithoutOverlap() {
        assertEquals(8 + 4 * 40, StructureMarkers.regionBytes(BUFFERS, BYTES));
        for (int i = 0; i < BUFFERS; i++) {
            assertEquals(StructureMarkers.markerOffset(i, BYTES) + 8, StructureMarkers.bufferOffset(i, BYTES));
            assertEquals(StructureMarkers.bufferOffset(i, BYTES) + BYTES, StructureMarkers.markerOffset(i + 1, BYTES));
        }
        assertEquals(StructureMarkers.regionBytes(BUFFERS, BYTES), StructureMarkers.markerOffset(BUFFERS, BYTES) + 8);
    }

    @Test
    void freshMarkersCheckAndFillingEveryBufferToItsEndLeavesThemIntact() {
        ByteBuffer b = region();
        for (int i = 0; i < BUFFERS; i++) {
            for (int k = 0; k < BYTES; k++) {
                b.put(BASE + StructureMarkers.bufferOffset(i, BYTES) + k, (byte) 0xEE);
            }
        }
        for (int i = 0; i < BUFFERS; i++) {
            assertTrue(StructureMarkers.checkAround(b, BASE, i, BYTES));
            assertEquals(-1, StructureMarkers.brokenAround(b, BASE, i, BYTES));
        }
    }

    @Test
    void aWriteOneBytePastABufferBreaksTheNextMarkerAndIsDescribed() {
        ByteBuffer b = region();
        int at = BASE + StructureMarkers.bufferOffset(1, BYTES) + BYTES; // one past buffer 1
        b.put(at, (byte) 0x41);
        assertTrue(StructureMarkers.checkAround(b, BASE, 0, BYTES));
        assertFalse(StructureMarkers.checkAround(b, BASE, 1, BYTES));
        assertFalse(StructureMarkers.checkAround(b, BASE, 2, BYTES), "the marker is shared with the next buffer");
        assertEquals(2, StructureMarkers.brokenAround(b, BASE, 1, BYTES));
        assertEquals(2, StructureMarkers.brokenAround(b, BASE, 2, BYTES));
        String d = StructureMarkers.describe("receive buffers of connection 9", b, BASE, 2, BYTES);
        assertTrue(d.startsWith("structure marker 2 of receive buffers of connection 9 at offset " + at
            + " (between buffer 1 and 2): expected 0x" + Long.toHexString(StructureMarkers.value(2)) + ", found 0x41"), d);
        assertTrue(d.contains(" [41 "), d);
    }

    @Test
    void everyMarkerHasItsOwnValueSoACopiedMarkerStillShows() {
        ByteBuffer b = region();
        b.putLong(BASE + StructureMarkers.markerOffset(3, BYTES), StructureMarkers.value(2));
        assertFalse(StructureMarkers.check(b, BASE, 3, BYTES));
        assertTrue(StructureMarkers.check(b, BASE, 2, BYTES));
    }
}
