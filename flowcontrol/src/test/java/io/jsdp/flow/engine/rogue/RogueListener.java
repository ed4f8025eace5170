package io.jsdp.flow.engine.rogue;

import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The rogue's passive side: a raw connection-manager listener. Each {@link #accept} takes one
 * connect request (an engine connection's {@code stack.connect}), gives it a queue pair with posted
 * receives and accepts it; the caller then reads the engine's Hello and answers (or not). Events of
 * accepted ids arrive on the listener's channel and are handed to their {@link RoguePeer}.
 * Single-threaded, like the peers.
 */
public final class RogueListener implements AutoCloseable {
    private final ProtectionDomain pd;
    private final CmEventChannel channel;
    private final CmId id;
    private final Map<CmId, ArrayDeque<CmEvent>> events = new HashMap<>();
    private final ArrayDeque<CmEvent> requests = new ArrayDeque<>();

    /**
     * Listens on an ephemeral loopback port.
     *
     * @param pd a protection domain of the rogue's device
     * @throws VerbsException when the device refuses
     */
    public RogueListener(ProtectionDomain pd) throws VerbsException {
        this.pd = pd;
        this.channel = pd.device().createEventChannel();
        CmId l = null;
        try {
            l = pd.device().createId(channel);
            l.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            l.listen(64);
        } catch (VerbsException | RuntimeException e) {
            if (l != null) {
                l.close();
            }
            channel.close();
            throw e;
        }
        this.id = l;
    }

    /**
     * The address engine connections connect to.
     *
     * @return the bound address
     */
    public InetSocketAddress address() {
        return id.localAddress();
    }

    /**
     * Accepts the next connect request, waiting up to {@link RoguePeer#STEP_NS}.
     *
     * @param o the rogue's sizes
     * @return the accepted rogue (its ESTABLISHED may still be on its way)
     * @throws Exception when no request comes or the accept fails
     */
    public RoguePeer accept(RoguePeer.Options o) throws Exception {
        long deadline = System.nanoTime() + RoguePeer.STEP_NS;
        while (requests.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no connect request within 5 s");
            }
            CmEvent e = channel.poll(Math.min(left, 1_000_000));
            if (e != null) {
                route(e);
            }
        }
        CmId request = requests.poll().id();
        events.put(request, new ArrayDeque<>());
        return RoguePeer.accept(this, request, pd, o);
    }

    private void route(CmEvent e) {
        if (e.type() == CmEventType.CONNECT_REQUEST) {
            requests.add(e);
            return;
        }
        ArrayDeque<CmEvent> q = events.get(e.id());
        if (q != null) {
            q.add(e);
        }
    }

    /** The next event of an accepted id, without waiting. */
    CmEvent nextEvent(CmId of) {
        CmEvent e;
        try {
            while ((e = channel.poll(0)) != null) {
                route(e);
            }
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        } catch (VerbsException ve) {
            // closed
        }
        ArrayDeque<CmEvent> q = events.get(of);
        return q == null ? null : q.poll();
    }

    void forget(CmId of) {
        events.remove(of);
    }

    /** Stops listening; refuses requests not taken. */
    @Override
    public void close() {
        for (CmEvent r : requests) {
            try {
                r.id().reject(null);
            } catch (VerbsException e) {
                // gone already
            }
            r.id().close();
        }
        id.close();
        try {
            channel.close();
        } catch (VerbsException e) {
            throw new IllegalStateException("rogue listener channel", e);
        }
    }
}
