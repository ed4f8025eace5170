package io.jsdp.ras;

import java.nio.ByteBuffer;

/**
 * Structure markers (seed 000, section 5.1.4): a known 8-byte value placed before and after each
 * buffer of a region (receive buffers, a ring's slots), and compared before the buffer is used. A
 * stray write that runs over a buffer's end, or lands in the region from outside (a bad offset in an
 * RDMA WRITE, a bug in another component sharing the memory), overwrites a marker; the owner then
 * aborts what used the buffer with an FFDC record instead of handing on bad data.
 *
 * <pre>
 *   offset 0          8                8+B        16+B               16+2B
 *          | marker 0 | buffer 0 (B)   | marker 1 | buffer 1 (B)     | marker 2 | ...
 * </pre>
 *
 * <p>Every marker has its own value ({@link #value(int)}: a constant mixed with the marker's index), so
 * that a copy of one buffer and its neighbouring marker onto another still shows. Checking is one
 * {@code getLong} and one compare and allocates nothing; {@link #describe} builds the text for the
 * FFDC record only once a check failed. The detection is probabilistic, as the seed says: a write that
 * stays inside one buffer's payload is not seen.
 */
public final class StructureMarkers {
    /** Bytes per marker. */
    public static final int MARKER_BYTES = 8;
    /** "jsdpMRK" and a zero byte; the index is added to it. Big-endian view: 6A 73 64 70 4D 52 4B 00. */
    private static final long BASE = 0x6A7364704D524B00L;

    private StructureMarkers() {
    }

    /**
     * The value of marker {@code index} of a region.
     *
     * @param index the marker's index, 0 for the one before the first buffer
     * @return the value
     */
    public static long value(int index) {
        return BASE + index;
    }

    /**
     * Bytes a region of {@code buffers} buffers of {@code bufferBytes} each takes with its markers.
     *
     * @param buffers the number of buffers
     * @param bufferBytes bytes per buffer
     * @return {@code MARKER_BYTES + buffers * (bufferBytes + MARKER_BYTES)}
     */
    public static int regionBytes(int buffers, int bufferBytes) {
        return MARKER_BYTES + buffers * (bufferBytes + MARKER_BYTES);
    }

    /**
     * Where buffer {@code index} starts, relative to the region's start.
     *
     * @param index the buffer
     * @param bufferBytes bytes per buffer
     * @return the offset of its first byte
     */
    public static int bufferOffset(int index, int bufferBytes) {
        return MARKER_BYTES + index * (bufferBytes + MARKER_BYTES);
    }

    /**
     * Where marker {@code index} is, relative to the region's start: marker {@code i} comes before
     * buffer {@code i}, marker {@code buffers} after the last buffer.
     *
     * @param index the marker
     * @param bufferBytes bytes per buffer
     * @return the offset of its first byte
     */
    public static int markerOffset(int index, int bufferBytes) {
        return index * (bufferBytes + MARKER_BYTES);
    }

    /**
     * Writes every marker of a region.
     *
     * @param region the memory (absolute offsets; position and limit are not used)
     * @param regionOffset where the region starts in {@code region}
     * @param buffers the number of buffers
     * @param bufferBytes bytes per buffer
     */
    public static void place(ByteBuffer region, int regionOffset, int buffers, int bufferBytes) {
        for (int i = 0; i <= buffers; i++) {
            region.putLong(regionOffset + markerOffset(i, bufferBytes), value(i));
        }
    }

    /**
     * Checks the marker before buffer {@code index}; check {@code index + 1} too for the one after it.
     *
     * @param region the memory
     * @param regionOffset where the region starts in {@code region}
     * @param index the marker
     * @param bufferBytes bytes per buffer
     * @return true when intact
     */
    public static boolean check(ByteBuffer region, int regionOffset, int index, int bufferBytes) {
        return region.getLong(regionOffset + markerOffset(index, bufferBytes)) == value(index);
    }

    /**
     * Checks both markers around buffer {@code index}: two loads, two compares.
     *
     * @param region the memory
     * @param regionOffset where the region starts in {@code region}
     * @param index the buffer
     * @param bufferBytes bytes per buffer
     * @return true when both are intact
     */
    public static boolean checkAround(ByteBuffer region, int regionOffset, int index, int bufferBytes) {
        int at = regionOffset + markerOffset(index, bufferBytes);
        return region.getLong(at) == value(index)
            && region.getLong(at + bufferBytes + MARKER_BYTES) == value(index + 1);
    }

    /**
     * The first broken marker around buffer {@code index}, for the report after {@link #checkAround}
     * failed.
     *
     * @param region the memory
     * @param regionOffset where the region starts in {@code region}
     * @param index the buffer
     * @param bufferBytes bytes per buffer
     * @return the broken marker's index ({@code index} or {@code index + 1}), or -1 when both are intact
     */
    public static int brokenAround(ByteBuffer region, int regionOffset, int index, int bufferBytes) {
        if (!check(region, regionOffset, index, bufferBytes)) {
            return index;
        }
        return check(region, regionOffset, index + 1, bufferBytes) ? -1 : index + 1;
    }

    /**
     * One line for an FFDC record about a broken marker: the region, the marker, its offset, the
     * value expected and the value found, and the bytes around it in hex.
     *
     * @param regionName e.g. {@code "receive buffers of connection 7"}
     * @param region the memory
     * @param regionOffset where the region starts in {@code region}
     * @param index the broken marker
     * @param bufferBytes bytes per buffer
     * @return the description
     */
    public static String describe(String regionName, ByteBuffer region, int regionOffset, int index, int bufferBytes) {
        int at = regionOffset + markerOffset(index, bufferBytes);
        long found = region.getLong(at);
        StringBuilder b = new StringBuilder(160).append("structure marker ").append(index).append(" of ")
            .append(regionName).append(" at offset ").append(at).append(" (between buffer ").append(index - 1)
            .append(" and ").append(index).append("): expected 0x").append(Long.toHexString(value(index)))
            .append(", found 0x").append(Long.toHexString(found)).append("; bytes ").append(Math.max(0, at - 8))
            .append("..").append(Math.min(region.capacity(), at + 16) - 1).append(':');
        for (int i = Math.max(0, at - 8); i < Math.min(region.capacity(), at + 16); i++) {
            b.append(i == at ? " [" : " ").append(String.format("%02x", region.get(i) & 0xff));
            if (i == at + MARKER_BYTES - 1) {
                b.append(']');
            }
        }
        return b.toString();
    }
}
