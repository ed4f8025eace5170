package io.jsdp.flow.engine;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The caps of one {@link SdpStack}: how many SDP connections it holds at once, and how many of them may be
 * in set-up (an outgoing connect, or an incoming request, whose connection manager and Hello exchange
 * have not finished). Every connection takes an admission before it allocates anything (its queue pair,
 * buffers, device memory) and gives it back when it releases them; a set-up slot is given back when the
 * handshake ends either way. Beyond a cap an outgoing connect is refused with {@link SdpLimitException}
 * (the provider connects over TCP instead, counted) and an incoming request is rejected with the reason
 * in the reject ({@link RejectReason}), so that the peer falls back to TCP too: a flood of connects, or a
 * peer that opens connections without end, costs this process a bounded amount, and nobody gets an
 * error a TCP connection would not give.
 *
 * <p>Read from {@link #CONNECTIONS_PROP} and {@link #HANDSHAKES_PROP} when the stack opens; a bad value
 * fails the stack's opening, naming the property.
 */
public final class ConnectionLimits {
    /** System property: the most SDP connections a stack holds at once. */
    public static final String CONNECTIONS_PROP = "jsdp.limit.connections";
    /** Default of {@link #CONNECTIONS_PROP}. */
    public static final int CONNECTIONS_DEFAULT = 16_384;
    /** System property: the most SDP connections of a stack in set-up at once, both directions together. */
    public static final String HANDSHAKES_PROP = "jsdp.limit.handshakes";
    /** Default of {@link #HANDSHAKES_PROP}. */
    public static final int HANDSHAKES_DEFAULT = 256;

    /** How the message of an {@link SdpLimitException} opens. */
    public static final String REACHED_OPENING = "SDP limit reached";

    private volatile int maxConnections;
    private volatile int maxHandshakes;
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger handshakes = new AtomicInteger();
    private final AtomicLong connectsLimited = new AtomicLong();
    private final AtomicLong requestsRefused = new AtomicLong();

    /** Which cap an admission hit. */
    enum Cap {
        /** {@link #CONNECTIONS_PROP}. */
        CONNECTIONS,
        /** {@link #HANDSHAKES_PROP}. */
        HANDSHAKES
    }

    ConnectionLimits() {
        this(SdpOptions.intProp(CONNECTIONS_PROP, CONNECTIONS_DEFAULT, 1, Integer.MAX_VALUE),
            SdpOptions.intProp(HANDSHAKES_PROP, HANDSHAKES_DEFAULT, 1, Integer.MAX_VALUE));
    }

    private ConnectionLimits(int maxConnections, int maxHandshakes) {
        this.maxConnections = maxConnections;
        this.maxHandshakes = maxHandshakes;
    }

    /**
     * Changes the caps for admissions from now on (connections already admitted keep theirs).
     *
     * @param connections the most connections at once, at least 1
     * @param handshakes the most connections in set-up at once, at least 1
     */
    public void set(int connections, int handshakes) {
        if (connections < 1 || handshakes < 1) {
            throw new IllegalArgumentException("limits must be at least 1: connections " + connections + ", handshakes "
                + handshakes);
        }
        maxConnections = connections;
        maxHandshakes = handshakes;
    }

    /**
     * Takes an admission and a set-up slot.
     *
     * @return null when both were taken, else the cap that was reached (nothing taken)
     */
    Cap admit() {
        if (connections.incrementAndGet() > maxConnections) {
            connections.decrementAndGet();
            return Cap.CONNECTIONS;
        }
        if (handshakes.incrementAndGet() > maxHandshakes) {
            handshakes.decrementAndGet();
            connections.decrementAndGet();
            return Cap.HANDSHAKES;
        }
        return null;
    }

    /** Gives a set-up slot back (the handshake ended). */
    void handshakeEnded() {
        handshakes.decrementAndGet();
    }

    /** Gives an admission back (the connection released its resources, or was never made). */
    void released() {
        connections.decrementAndGet();
    }

    /** Counts an outgoing connect refused at a cap. */
    void connectLimited() {
        connectsLimited.incrementAndGet();
    }

    /** Counts an incoming request rejected at a cap, or at a full backlog. */
    void requestRefused() {
        requestsRefused.incrementAndGet();
    }

    /**
     * The message of a refusal at {@code cap}: what was reached and which property raises it.
     *
     * @param cap the cap reached
     * @return e.g. {@code "16384 SDP connections (jsdp.limit.connections)"}
     */
    String reached(Cap cap) {
        return cap == Cap.CONNECTIONS ? maxConnections + " SDP connections (" + CONNECTIONS_PROP + ")"
            : maxHandshakes + " SDP connections in set-up (" + HANDSHAKES_PROP + ")";
    }

    /**
     * The caps, what is held of them and what was refused, for {@code stat}.
     *
     * @return one line, e.g. {@code "connections 3/16384, in set-up 0/256; connects over the limits 0, requests refused 0"}
     */
    public String describe() {
        return "connections " + Math.max(0, connections.get()) + "/" + maxConnections + ", in set-up "
            + Math.max(0, handshakes.get()) + "/" + maxHandshakes + "; connects over the limits " + connectsLimited.get()
            + ", requests refused " + requestsRefused.get();
    }

    /**
     * Connections holding an admission now.
     *
     * @return the count
     */
    public int connections() {
        return connections.get();
    }

    /**
     * Connections in set-up now.
     *
     * @return the count
     */
    public int handshakes() {
        return handshakes.get();
    }

    /**
     * Outgoing connects refused at a cap so far.
     *
     * @return the count
     */
    public long connectsLimited() {
        return connectsLimited.get();
    }

    /**
     * Incoming requests rejected at a cap or a full backlog so far.
     *
     * @return the count
     */
    public long requestsRefused() {
        return requestsRefused.get();
    }
}
