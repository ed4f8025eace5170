package io.jsdp.testbed;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The device's key table: memory-region keys to regions, and device addresses to regions.
 *
 * <p>A key is {@code index << 8 | generation} (as rxe builds them), so a key of a deregistered region
 * stays invalid after its slot is reused. A region's device address is {@code index << 32}: the
 * address itself names the slot, which lets inline sends find their bytes without a key, and regions
 * never overlap (a region is shorter than 2^31 bytes). Index 0 is never used, so key 0 and address 0
 * name nothing.
 *
 * <p>Lookups are lock-free (acquire reads of the slot array); inserts and removals take the lock.
 */
final class MemoryRegionTable {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(SoftMemoryRegion[].class);
    private static final int MAX_INDEX = (1 << 24) - 1;

    private final ReentrantLock lock = new ReentrantLock();
    /** Replaced (grown) under the lock; elements written with release, read with acquire. */
    private volatile SoftMemoryRegion[] slots = new SoftMemoryRegion[64];
    /** Guarded by lock. */
    private int[] generations = new int[64];
    /** Free slot indexes, a stack; guarded by lock. */
    private int[] free = new int[64];
    private int freeCount;
    /** Next never-used index; guarded by lock. */
    private int nextIndex = 1;

    /** Reserves a slot and returns its key, or -1 when the table is full. */
    int reserveKey() {
        lock.lock();
        try {
            int index;
            if (freeCount > 0) {
                index = free[--freeCount];
            } else {
                if (nextIndex > MAX_INDEX) {
                    return -1;
                }
                index = nextIndex++;
                if (index >= slots.length) {
                    grow(index);
                }
            }
            int generation = (generations[index] + 1) & 0xff;
            generations[index] = generation;
            return index << 8 | generation;
        } finally {
            lock.unlock();
        }
    }

    /** Publishes a region under the key {@link #reserveKey()} gave it. */
    void publish(SoftMemoryRegion mr) {
        lock.lock();
        try {
            // under the lock: a concurrent grow() must not copy the array before this store lands
            SLOT.setRelease(slots, mr.key() >>> 8, mr);
        } finally {
            lock.unlock();
        }
    }

    /** Removes a region; its key and address stop resolving at once. */
    void remove(SoftMemoryRegion mr) {
        int index = mr.key() >>> 8;
        lock.lock();
        try {
            SoftMemoryRegion[] s = slots;
            if (SLOT.getAcquire(s, index) == mr) {
                SLOT.setRelease(s, index, (SoftMemoryRegion) null);
                if (freeCount == free.length) {
                    free = java.util.Arrays.copyOf(free, free.length * 2);
                }
                free[freeCount++] = index;
            }
        } finally {
            lock.unlock();
        }
    }

    /** The open region with this key, or null. */
    SoftMemoryRegion byKey(int key) {
        int index = key >>> 8;
        SoftMemoryRegion[] s = slots;
        if (index == 0 || index >= s.length) {
            return null;
        }
        SoftMemoryRegion mr = (SoftMemoryRegion) SLOT.getAcquire(s, index);
        return mr != null && mr.key() == key ? mr : null;
    }

    /** The open region containing device address {@code address}, or null. */
    SoftMemoryRegion byAddress(long address) {
        long index = address >>> 32;
        SoftMemoryRegion[] s = slots;
        if (index == 0 || index >= s.length) {
            return null;
        }
        return (SoftMemoryRegion) SLOT.getAcquire(s, (int) index);
    }

    static long addressOf(int key) {
        return ((long) (key >>> 8)) << 32;
    }

    private void grow(int index) {
        int n = slots.length;
        while (n <= index) {
            n *= 2;
        }
        SoftMemoryRegion[] bigger = new SoftMemoryRegion[n];
        SoftMemoryRegion[] old = slots;
        for (int i = 0; i < old.length; i++) {
            bigger[i] = (SoftMemoryRegion) SLOT.getAcquire(old, i);
        }
        generations = java.util.Arrays.copyOf(generations, n);
        slots = bigger;
    }
}
