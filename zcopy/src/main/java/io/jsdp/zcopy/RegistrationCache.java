package io.jsdp.zcopy;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Registrations of application buffers, kept after their transfer so that writing or reading the same
 * buffer again costs no registration. Keyed by the buffer object (a slice or duplicate is another
 * buffer: the device registers a buffer from index 0 to its capacity). Entries in use by a transfer
 * are never dropped; idle ones are dropped least recently used first while the registered bytes exceed
 * the budget, when their buffer is released ({@link #invalidate}), and all at {@link #close()}.
 *
 * <p>An entry serves only acquisitions asking for exactly its remote access: a buffer may have one
 * entry per kind (local only, remote read, remote write). An entry with {@link Access#REMOTE_WRITE}
 * (a SinkAvail advertisement) is dropped when its last user releases it, never kept idle: a peer that
 * kept the rkey of an old advertisement must not be able to write into the buffer later, whatever the
 * application uses it for then.
 *
 * <p>Not thread-safe: {@link ZeroCopy} calls it under its lock.
 */
final class RegistrationCache {
    /** One registration. */
    static final class Entry {
        final ByteBuffer buffer;
        final MemoryRegion region;
        int refs;
        long lastUse;
        boolean invalid;

        Entry(ByteBuffer buffer, MemoryRegion region) {
            this.buffer = buffer;
            this.region = region;
        }
    }

    private static final int REMOTE = Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC;

    private final ProtectionDomain pd;
    private final long budgetBytes;
    private final List<Entry> entries = new ArrayList<>();
    private long registeredBytes;
    private long tick;
    private long hits;
    private long misses;
    private long evictions;

    RegistrationCache(ProtectionDomain pd, long budgetBytes) {
        this.pd = pd;
        this.budgetBytes = budgetBytes;
    }

    /**
     * The registration of {@code buffer}, made now if there is none; the caller holds it until
     * {@link #release}.
     *
     * @param buffer a direct buffer
     * @param access the access flags a new registration gets
     * @return the entry
     * @throws VerbsException when the device refuses the registration
     */
    Entry acquire(ByteBuffer buffer, int access) throws VerbsException {
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e.buffer == buffer && !e.invalid && (e.region.access() & REMOTE) == (access & REMOTE)
                && (e.region.access() & access) == access) {
                e.refs++;
                e.lastUse = ++tick;
                hits++;
                return e;
            }
        }
        misses++;
        evictIdle(buffer.capacity());
        Entry e = new Entry(buffer, pd.register(buffer, access));
        e.refs = 1;
        e.lastUse = ++tick;
        entries.add(e);
        registeredBytes += buffer.capacity();
        return e;
    }

    /**
     * Gives an entry back.
     *
     * @param e the entry from {@link #acquire}
     * @return true when this dropped the last registration of an invalidated buffer (it may be freed now)
     */
    boolean release(Entry e) {
        e.refs--;
        if (e.refs == 0 && e.invalid) {
            drop(e);
            return !registered(e.buffer);
        }
        if (e.refs == 0 && (e.region.access() & Access.REMOTE_WRITE) != 0) {
            drop(e); // not kept: see the class comment
            return false;
        }
        evictIdle(0);
        return false;
    }

    private boolean registered(ByteBuffer buffer) {
        for (Entry e : entries) {
            if (e.buffer == buffer) {
                return true;
            }
        }
        return false;
    }

    int remoteWriteRegistrations() {
        int n = 0;
        for (Entry e : entries) {
            if ((e.region.access() & Access.REMOTE_WRITE) != 0) {
                n++;
            }
        }
        return n;
    }

    /**
     * The buffer is being released: drop its registrations.
     *
     * @param buffer the buffer
     * @return true when none is in use (the buffer may be freed now); false when a transfer still holds
     *     one — {@link #release} then reports the drop
     */
    boolean invalidate(ByteBuffer buffer) {
        boolean free = true;
        for (int i = entries.size() - 1; i >= 0; i--) {
            Entry e = entries.get(i);
            if (e.buffer == buffer) {
                if (e.refs == 0) {
                    drop(e);
                } else {
                    e.invalid = true;
                    free = false;
                }
            }
        }
        return free;
    }

    private void evictIdle(long need) {
        while (registeredBytes + need > budgetBytes) {
            Entry lru = null;
            for (Entry e : entries) {
                if (e.refs == 0 && (lru == null || e.lastUse < lru.lastUse)) {
                    lru = e;
                }
            }
            if (lru == null) {
                return; // everything is in use: over budget until a transfer ends
            }
            drop(lru);
            evictions++;
        }
    }

    private void drop(Entry e) {
        entries.remove(e);
        registeredBytes -= e.buffer.capacity();
        e.region.close();
    }

    /** Deregisters everything (the stack is closing; no queue pair can reach the regions any more). */
    void close() {
        for (Entry e : new ArrayList<>(entries)) {
            drop(e);
        }
    }

    int size() {
        return entries.size();
    }

    ZeroCopy.CacheStats stats() {
        int inUse = 0;
        for (Entry e : entries) {
            if (e.refs > 0) {
                inUse++;
            }
        }
        return new ZeroCopy.CacheStats(entries.size(), inUse, registeredBytes, hits, misses, evictions);
    }

    long registeredBytes() {
        return registeredBytes;
    }

    String describe() {
        return "registrations=" + entries.size() + " bytes=" + registeredBytes + " budget=" + budgetBytes + " hits=" + hits
            + " misses=" + misses + " evictions=" + evictions;
    }
}
