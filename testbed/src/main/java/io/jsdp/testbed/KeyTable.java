package io.jsdp.testbed;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A host-fabric device's remote keys in shared memory, so a peer process checks an rkey and finds the
 * memory it names without the owner's help (one-sided RDMA). It lives in the device's segment after
 * the device's doorbell word ({@link #OFFSET}); entry {@code i} describes the region whose key has
 * index {@code i} ({@link MemoryRegionTable}), when that region allows remote access.
 *
 * <pre>
 *  entry (32 B): key (i32, 0 = none) | access (i32) | pd number (i32) | length (i32)
 *                | device-memory segment number (i64, 0 = not device memory) | offset in it (i32) | -
 * </pre>
 *
 * The owner writes an entry's fields while its key word is 0 and publishes it by a release store of
 * the key; it revokes by storing 0. A reader loads the key (acquire), the fields, and the key again:
 * a changed key means the entry was revoked or reused meanwhile, and the lookup fails.
 */
final class KeyTable {
    /** Where the table starts in the device segment (after the 64-byte doorbell word). */
    static final int OFFSET = 64;
    /** Entries: keys with a larger index are not reachable from other processes. */
    static final int ENTRIES = 16_384;
    static final int ENTRY_BYTES = 32;
    /** Bytes of a device segment: doorbell word and table. */
    static final int SEGMENT_BYTES = OFFSET + ENTRIES * ENTRY_BYTES;

    private static final int E_KEY = 0;
    private static final int E_ACCESS = 4;
    private static final int E_PD = 8;
    private static final int E_LENGTH = 12;
    private static final int E_SEGMENT = 16;
    private static final int E_SEG_OFFSET = 24;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buf;

    KeyTable(ByteBuffer segment) {
        if (segment.capacity() < SEGMENT_BYTES) {
            throw new IllegalArgumentException("device segment of " + segment.capacity() + " bytes, need " + SEGMENT_BYTES);
        }
        this.buf = segment;
    }

    private static int entry(int index) {
        return OFFSET + index * ENTRY_BYTES;
    }

    /**
     * Publishes a region with remote access.
     *
     * @return false when its key's index is beyond the table (the region is not reachable across processes)
     */
    boolean publish(int key, int access, int pd, int length, long segment, int segmentOffset) {
        int index = key >>> 8;
        if (index <= 0 || index >= ENTRIES) {
            return false;
        }
        int e = entry(index);
        INTS.setVolatile(buf, e + E_KEY, 0);
        INTS.set(buf, e + E_ACCESS, access);
        INTS.set(buf, e + E_PD, pd);
        INTS.set(buf, e + E_LENGTH, length);
        LONGS.set(buf, e + E_SEGMENT, segment);
        INTS.set(buf, e + E_SEG_OFFSET, segmentOffset);
        INTS.setRelease(buf, e + E_KEY, key);
        return true;
    }

    /** Revokes the entry of {@code key}, if it still holds that key. */
    void revoke(int key) {
        int index = key >>> 8;
        if (index <= 0 || index >= ENTRIES) {
            return;
        }
        INTS.compareAndSet(buf, entry(index) + E_KEY, key, 0);
    }

    /**
     * Looks up {@code rkey} into {@code out}; a consistent snapshot or nothing.
     *
     * @return true when the key names a published region
     */
    boolean lookup(int rkey, Entry out) {
        int index = rkey >>> 8;
        if (rkey == 0 || index <= 0 || index >= ENTRIES) {
            return false;
        }
        int e = entry(index);
        if ((int) INTS.getAcquire(buf, e + E_KEY) != rkey) {
            return false;
        }
        out.access = (int) INTS.get(buf, e + E_ACCESS);
        out.pd = (int) INTS.get(buf, e + E_PD);
        out.length = (int) INTS.get(buf, e + E_LENGTH);
        out.segment = (long) LONGS.get(buf, e + E_SEGMENT);
        out.segmentOffset = (int) INTS.get(buf, e + E_SEG_OFFSET);
        VarHandle.loadLoadFence();
        return (int) INTS.getAcquire(buf, e + E_KEY) == rkey;
    }

    /** A looked-up entry; reused by its owner thread. */
    static final class Entry {
        int access;
        int pd;
        int length;
        long segment;
        int segmentOffset;
    }
}
