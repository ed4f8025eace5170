package io.jsdp.provider;

import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.AbstractSet;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The provider's selector: one selector for jsdp's channels and the JDK's own (datagram, pipe,
 * Unix-domain, inherited, and TCP fallback channels), because Netty, Jetty and the JDK's HttpClient
 * register every kind with one selector ({@code java-nio-provider.md} §1.3, §2.1).
 *
 * <p>JDK channels are registered, with the same interest set, in an inner JDK selector, whose keys
 * carry ours as attachment; every selection waits in that inner selector, so {@link #wakeup()},
 * interrupts and JDK readiness all end the wait there. The semantics are the JDK's: cancelled keys
 * are flushed before and after each selection, a key already selected has its ready set OR-ed and a
 * new one replaced, the count is the number of keys whose ready sets changed, {@link #keys()} is a
 * live unmodifiable view, {@link #selectedKeys()} supports removal but not addition, and
 * {@code register} never blocks, even while another thread selects (it takes effect at the next
 * selection, as with the JDK).
 *
 * <p>Locking as in {@code sun.nio.ch.SelectorImpl}: a selection holds this selector's monitor, then
 * the selected-key set's, the order {@link Selector#select(java.util.function.Consumer)} uses too.
 */
final class HybridSelector extends AbstractSelector {
    private final Selector inner;
    private final Set<HybridKey> keys = ConcurrentHashMap.newKeySet();
    private final Set<SelectionKey> publicKeys = Collections.unmodifiableSet(keys);
    /** Guarded by publicSelected's monitor (and selections hold this selector's first). */
    private final Set<SelectionKey> selected = new HashSet<>();
    private final Set<SelectionKey> publicSelected = new UngrowableSet(selected);

    HybridSelector(SelectorProvider provider, Selector inner) {
        super(provider);
        this.inner = inner;
    }

    @Override
    protected SelectionKey register(AbstractSelectableChannel ch, int ops, Object att) {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
        HybridKey k = new HybridKey(this, ch, ops);
        k.attach(att);
        if (ch instanceof SdpSelectable s) {
            k.source = s;
            keys.add(k);
            s.keyAdded(k);
            return closedMeanwhile(k);
        }
        try {
            // a JDK channel: the inner selector watches it for us
            k.inner = ch.register(inner, ops, k);
        } catch (IOException e) {
            // closed meanwhile: the caller, SelectableChannel.register, declares ClosedChannelException
            throw HybridSelector.<RuntimeException>sneaky(e);
        }
        keys.add(k);
        return closedMeanwhile(k);
    }

    /** A close that ran between the open check and keys.add would never deregister the key: undo it. */
    private HybridKey closedMeanwhile(HybridKey k) {
        if (isOpen()) {
            return k;
        }
        keys.remove(k);
        if (k.inner != null) {
            k.inner.cancel();
        }
        if (k.source != null) {
            k.source.keyRemoved(k);
        }
        throw new ClosedSelectorException();
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    @Override
    public Set<SelectionKey> keys() {
        ensureOpen();
        return publicKeys;
    }

    @Override
    public Set<SelectionKey> selectedKeys() {
        ensureOpen();
        return publicSelected;
    }

    private void ensureOpen() {
        if (!isOpen()) {
            throw new ClosedSelectorException();
        }
    }

    @Override
    public int selectNow() throws IOException {
        return doSelect(-1);
    }

    @Override
    public int select(long timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("Negative timeout");
        }
        return doSelect(timeout);
    }

    @Override
    public int select() throws IOException {
        return doSelect(0);
    }

    /** @param timeoutMs -1 for no wait, 0 for no limit, else milliseconds */
    private int doSelect(long timeoutMs) throws IOException {
        synchronized (this) {
            ensureOpen();
            synchronized (publicSelected) {
                flushCancelled();
                boolean wait = timeoutMs >= 0 && !anyNativeReady();
                if (wait) {
                    begin(); // an interrupt calls wakeup(), which ends the inner wait
                }
                try {
                    if (!wait) {
                        inner.selectNow();
                    } else if (Thread.currentThread().isInterrupted()) {
                        inner.selectNow(); // interrupted before the wait: the JDK returns at once
                    } else if (timeoutMs == 0) {
                        inner.select();
                    } else {
                        inner.select(timeoutMs);
                    }
                } finally {
                    if (wait) {
                        end();
                    }
                }
                flushCancelled();
                return collectReady();
            }
        }
    }

    /** Whether a jsdp channel's SDP side is ready for its key's interest: then the selection must not wait. */
    private boolean anyNativeReady() {
        for (HybridKey k : keys) {
            SdpSelectable s = k.source;
            if (s != null && k.isValid() && (s.nativeReadyOps() & k.interestOpsRaw()) != 0) {
                return true;
            }
        }
        return false;
    }

    /** Takes the inner selector's ready keys and the SDP sides' readiness, and applies the JDK's rules. */
    private int collectReady() {
        Set<SelectionKey> innerSelected = inner.selectedKeys();
        for (Iterator<SelectionKey> it = innerSelected.iterator(); it.hasNext();) {
            SelectionKey ik = it.next();
            it.remove();
            HybridKey k = (HybridKey) ik.attachment();
            if (k != null && k.isValid() && ik.isValid()) {
                k.pending |= ik.readyOps();
            }
        }
        int updated = 0;
        for (HybridKey k : keys) {
            if (!k.isValid()) {
                k.pending = 0;
                continue;
            }
            SdpSelectable s = k.source;
            int ready = (k.pending | (s == null ? 0 : s.nativeReadyOps())) & k.interestOpsRaw();
            k.pending = 0;
            if (ready == 0) {
                continue;
            }
            if (selected.contains(k)) {
                int old = k.readyOpsRaw();
                if ((ready & ~old) != 0) {
                    k.readyOps(old | ready);
                    updated++;
                }
            } else {
                k.readyOps(ready);
                selected.add(k);
                updated++;
            }
        }
        return updated;
    }

    /** Deregisters the cancelled keys (AbstractSelector's set), as the JDK does around a selection. */
    private void flushCancelled() {
        Set<SelectionKey> cancelled = cancelledKeys();
        synchronized (cancelled) {
            if (cancelled.isEmpty()) {
                return;
            }
            for (SelectionKey sk : cancelled) {
                HybridKey k = (HybridKey) sk;
                keys.remove(k);
                selected.remove(k);
                if (k.inner != null) {
                    k.inner.cancel();
                }
                if (k.source != null) {
                    k.source.keyRemoved(k);
                }
                deregister(k);
            }
            cancelled.clear();
        }
    }

    @Override
    public Selector wakeup() {
        inner.wakeup();
        return this;
    }

    @Override
    protected void implCloseSelector() throws IOException {
        inner.wakeup();
        synchronized (this) {
            synchronized (publicSelected) {
                for (HybridKey k : keys) {
                    if (k.inner != null) {
                        k.inner.cancel();
                    }
                    if (k.source != null) {
                        k.source.keyRemoved(k);
                    }
                    deregister(k);
                }
                keys.clear();
                selected.clear();
                flushCancelledAfterClose();
                inner.close();
            }
        }
    }

    private void flushCancelledAfterClose() {
        Set<SelectionKey> cancelled = cancelledKeys();
        synchronized (cancelled) {
            cancelled.clear();
        }
    }

    /** A selection key of this selector; for a JDK channel it shadows the inner selector's key. */
    static final class HybridKey extends java.nio.channels.spi.AbstractSelectionKey {
        private final HybridSelector selector;
        private final SelectableChannel channel;
        private volatile int interestOps;
        private volatile int readyOps;
        /** The inner selector's key of a JDK channel or of a jsdp channel's JDK delegate. */
        volatile SelectionKey inner;
        /** The jsdp channel whose SDP side this key watches, or null for a JDK channel. */
        volatile SdpSelectable source;
        /** Ready ops gathered during one selection; touched only by the selecting thread. */
        int pending;

        HybridKey(HybridSelector selector, SelectableChannel channel, int ops) {
            this.selector = selector;
            this.channel = channel;
            this.interestOps = ops;
        }

        @Override
        public SelectableChannel channel() {
            return channel;
        }

        @Override
        public Selector selector() {
            return selector;
        }

        @Override
        public int interestOps() {
            ensureValid();
            return interestOps;
        }

        @Override
        public SelectionKey interestOps(int ops) {
            ensureValid();
            if ((ops & ~channel.validOps()) != 0) {
                throw new IllegalArgumentException("Invalid interest ops: " + ops);
            }
            interestOps = ops;
            SelectionKey i = inner;
            if (i != null) {
                i.interestOps(ops); // CancelledKeyException when the channel closed meanwhile: so are we
            }
            return this;
        }

        @Override
        public int readyOps() {
            ensureValid();
            return readyOps;
        }

        /**
         * Watches a jsdp channel's JDK delegate (its TCP fallback connection, a server's TCP half) in the
         * inner selector, replacing the delegate watched before.
         *
         * @param delegate the JDK channel, non-blocking
         * @throws java.nio.channels.ClosedChannelException when the delegate is closed
         */
        void useDelegate(SelectableChannel delegate) throws java.nio.channels.ClosedChannelException {
            SelectionKey old = inner;
            if (old != null && old.channel() == delegate) {
                return;
            }
            inner = delegate.register(selector.inner, interestOps, this);
            if (old != null) {
                old.cancel();
            }
        }

        /** Wakes the selector: the SDP side's readiness may have changed. */
        void wakeSelector() {
            selector.wakeup();
        }

        int interestOpsRaw() {
            return interestOps;
        }

        int readyOpsRaw() {
            return readyOps;
        }

        void readyOps(int ops) {
            readyOps = ops;
        }

        private void ensureValid() {
            if (!isValid()) {
                throw new java.nio.channels.CancelledKeyException();
            }
        }

        @Override
        public String toString() {
            return "HybridKey[" + channel + (isValid() ? ", interest=" + interestOps + ", ready=" + readyOps : ", invalid")
                + "]";
        }
    }

    /** The selected-key set as users see it: removal yes, addition no (the JDK's ungrowable set). */
    private static final class UngrowableSet extends AbstractSet<SelectionKey> {
        private final Set<SelectionKey> set;

        UngrowableSet(Set<SelectionKey> set) {
            this.set = set;
        }

        @Override
        public Iterator<SelectionKey> iterator() {
            return set.iterator();
        }

        @Override
        public int size() {
            return set.size();
        }

        @Override
        public boolean contains(Object o) {
            return set.contains(o);
        }

        @Override
        public boolean remove(Object o) {
            return set.remove(o);
        }

        @Override
        public void clear() {
            set.clear();
        }

        @Override
        public boolean add(SelectionKey k) {
            throw new UnsupportedOperationException();
        }
    }
}
