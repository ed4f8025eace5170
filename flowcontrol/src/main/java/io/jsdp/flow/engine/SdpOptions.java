package io.jsdp.flow.engine;

import io.jsdp.flow.FlowControlScheme;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Per-connection settings of the engine, with defaults from {@code jsdp.*} system properties (read and
 * validated when this class initializes: a bad value fails start-up with the property named).
 * Mutable builder; the engine copies it when a connection is created.
 *
 * <p>Buffers: each side posts {@link #receiveBuffers()} receive buffers of {@link #bufferBytes()} bytes
 * (BSDH included): the peer's credits, and the most unread data a connection holds. The send side
 * has {@link #sendBuffers()} slots of the same size: what {@code write} can accept before the peer
 * returns credits. {@code SO_RCVBUF} and {@code SO_SNDBUF} map onto the counts
 * ({@link #receiveBufferBytes(int)}, {@link #sendBufferBytes(int)}).
 */
public final class SdpOptions {
    /** System property: bytes of each receive buffer and send slot, BSDH included. */
    public static final String BUFFER_BYTES_PROP = "jsdp.bufferBytes";
    /** Default of {@link #BUFFER_BYTES_PROP}: OFED's 32 KiB. */
    public static final int BUFFER_BYTES_DEFAULT = 32 * 1024;
    /** Smallest buffer: it must hold a HelloAck (196 bytes). */
    public static final int BUFFER_BYTES_MIN = 256;
    /** Largest buffer. */
    public static final int BUFFER_BYTES_MAX = 1024 * 1024;
    /** System property: receive buffers each connection posts (the peer's credits). */
    public static final String RECEIVE_BUFFERS_PROP = "jsdp.receiveBuffers";
    /** Default of {@link #RECEIVE_BUFFERS_PROP}. */
    public static final int RECEIVE_BUFFERS_DEFAULT = 16;
    /** System property: send slots of each connection. */
    public static final String SEND_BUFFERS_PROP = "jsdp.sendBuffers";
    /** Default of {@link #SEND_BUFFERS_PROP}. */
    public static final int SEND_BUFFERS_DEFAULT = 16;
    /** Fewest send slots. */
    public static final int BUFFERS_MIN = 2;
    /**
     * Fewest receive buffers: data needs two credits (the last is reserved for credit updates), and
     * with only two every message would need an update in answer, for ever
     * ({@link io.jsdp.flow.credit.CreditFlowControl}).
     */
    public static final int RECEIVE_BUFFERS_MIN = 3;
    /** Most buffers of either kind. */
    public static final int BUFFERS_MAX = 256;
    /** System property: how long a blocked operation spins before it parks. */
    public static final String SPIN_NS_PROP = "jsdp.spinNs";
    /** Default of {@link #SPIN_NS_PROP}. */
    public static final long SPIN_NS_DEFAULT = 20_000;
    /** System property: the longest connect (CM exchange plus Hello/HelloAck). */
    public static final String CONNECT_TIMEOUT_MS_PROP = "jsdp.connectTimeoutMs";
    /** Default of {@link #CONNECT_TIMEOUT_MS_PROP}. */
    public static final int CONNECT_TIMEOUT_MS_DEFAULT = 10_000;
    /** System property: how long a graceful close waits for the peer's DisConn before it aborts. */
    public static final String CLOSE_TIMEOUT_MS_PROP = "jsdp.closeTimeoutMs";
    /** Default of {@link #CLOSE_TIMEOUT_MS_PROP}: OFED's FIN-wait 60 s. */
    public static final int CLOSE_TIMEOUT_MS_DEFAULT = 60_000;
    /** System property: idle time before a keepalive probe (with {@code SO_KEEPALIVE}). */
    public static final String KEEPALIVE_TIME_MS_PROP = "jsdp.keepAliveTimeMs";
    /** Default of {@link #KEEPALIVE_TIME_MS_PROP}: TCP's and OFED's two hours. */
    public static final long KEEPALIVE_TIME_MS_DEFAULT = TimeUnit.HOURS.toMillis(2);

    /**
     * System property: the flow-control scheme a connection asks for ({@code credit}, {@code packetized}
     * or {@code nic}); the connection uses it when the peer asks for the same, else credit-based.
     */
    public static final String FLOW_CONTROL_PROP = "jsdp.flowControl";
    /** Default of {@link #FLOW_CONTROL_PROP} ({@code docs/configuration.md} says why). */
    public static final FlowControlScheme FLOW_CONTROL_DEFAULT = FlowControlScheme.CREDIT;

    static final FlowControlScheme SYSTEM_FLOW_CONTROL = schemeProp(FLOW_CONTROL_PROP, FLOW_CONTROL_DEFAULT);

    /**
     * System property: whether credit-based flow control lets a write join a message that has not gone
     * yet (one waiting for credits, or one Nagle's rule holds). {@code false} gives seed 001 §4.1.1's
     * credit-based scheme, for reproducing that thesis' experiments: every write goes as its own
     * message (split at the buffer size), and a write takes nothing while an earlier message still
     * waits for credits, as the thesis' {@code send} returns only once its data is on the network
     * ({@code docs/protocol.md} section 6). Packetized and NIC-assisted connections do not look at it.
     */
    public static final String CREDIT_COALESCE_PROP = "jsdp.credit.coalesce";
    /** Default of {@link #CREDIT_COALESCE_PROP}: coalesce (what TCP does with a full window). */
    public static final boolean CREDIT_COALESCE_DEFAULT = true;

    static final boolean SYSTEM_CREDIT_COALESCE = booleanProp(CREDIT_COALESCE_PROP, CREDIT_COALESCE_DEFAULT);

    /**
     * Property: the smallest direct buffer a blocking write sends by zero copy (SrcAvail / RDMA READ,
     * {@code docs/protocol.md} section 9) when the stack has zero copy and the peer negotiated it; 0
     * turns zero copy off.
     */
    public static final String ZCOPY_THRESHOLD_PROP = "jsdp.zcopy.threshold";
    /**
     * Default of {@link #ZCOPY_THRESHOLD_PROP}: 512 KiB, the smallest size of the A/B sweep in
     * {@code docs/results/zcopy.md} at which zero copy is not slower than buffer copy in one JVM
     * (1.09×) and faster across two (1.79×); at 256 KiB it was slower in both (0.72×, 0.83×), at 64 KiB,
     * OFED's default, five times slower: a synchronous transfer costs a round trip per write.
     */
    public static final int ZCOPY_THRESHOLD_DEFAULT = 512 * 1024;
    /** The smallest non-zero threshold: smaller writes never gain from an RDMA round trip. */
    public static final int ZCOPY_THRESHOLD_MIN = 4096;

    static final int SYSTEM_BUFFER_BYTES = intProp(BUFFER_BYTES_PROP, BUFFER_BYTES_DEFAULT, BUFFER_BYTES_MIN, BUFFER_BYTES_MAX);
    static final int SYSTEM_RECEIVE_BUFFERS = intProp(RECEIVE_BUFFERS_PROP, RECEIVE_BUFFERS_DEFAULT, RECEIVE_BUFFERS_MIN, BUFFERS_MAX);
    static final int SYSTEM_SEND_BUFFERS = intProp(SEND_BUFFERS_PROP, SEND_BUFFERS_DEFAULT, BUFFERS_MIN, BUFFERS_MAX);
    static final long SYSTEM_SPIN_NS = longProp(SPIN_NS_PROP, SPIN_NS_DEFAULT, 0, TimeUnit.SECONDS.toNanos(10));
    static final int SYSTEM_CONNECT_TIMEOUT_MS = intProp(CONNECT_TIMEOUT_MS_PROP, CONNECT_TIMEOUT_MS_DEFAULT, 1, Integer.MAX_VALUE);
    static final int SYSTEM_CLOSE_TIMEOUT_MS = intProp(CLOSE_TIMEOUT_MS_PROP, CLOSE_TIMEOUT_MS_DEFAULT, 1, Integer.MAX_VALUE);
    static final long SYSTEM_KEEPALIVE_TIME_MS = longProp(KEEPALIVE_TIME_MS_PROP, KEEPALIVE_TIME_MS_DEFAULT, 1, Long.MAX_VALUE / 2_000_000);
    /** Read here, not at exit: a bad value fails at start-up, not silently inside the shutdown hook. */
    static final long SYSTEM_EXIT_DRAIN_MS = longProp(ExitDrain.EXIT_DRAIN_MS_PROP, ExitDrain.EXIT_DRAIN_MS_DEFAULT, 0,
        TimeUnit.HOURS.toMillis(1));

    static final int SYSTEM_ZCOPY_THRESHOLD = zcopyThresholdProp();

    private int bufferBytes = SYSTEM_BUFFER_BYTES;
    private int receiveBuffers = SYSTEM_RECEIVE_BUFFERS;
    private int sendBuffers = SYSTEM_SEND_BUFFERS;
    private long spinNs = SYSTEM_SPIN_NS;
    private int connectTimeoutMs = SYSTEM_CONNECT_TIMEOUT_MS;
    private int closeTimeoutMs = SYSTEM_CLOSE_TIMEOUT_MS;
    private long keepAliveTimeMs = SYSTEM_KEEPALIVE_TIME_MS;
    private boolean keepAlive;
    private boolean noDelay;
    private int lingerSeconds = -1;
    private FlowControlScheme flowControl = SYSTEM_FLOW_CONTROL;
    private int zcopyThreshold = SYSTEM_ZCOPY_THRESHOLD;
    private boolean creditCoalesce = SYSTEM_CREDIT_COALESCE;

    /** Creates options with the configured defaults. */
    public SdpOptions() {
    }

    private static FlowControlScheme schemeProp(String name, FlowControlScheme def) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return def;
        }
        try {
            return FlowControlScheme.fromName(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
        }
    }

    private static int zcopyThresholdProp() {
        int n = intProp(ZCOPY_THRESHOLD_PROP, ZCOPY_THRESHOLD_DEFAULT, 0, Integer.MAX_VALUE);
        if (n != 0 && n < ZCOPY_THRESHOLD_MIN) {
            throw new IllegalArgumentException(ZCOPY_THRESHOLD_PROP + ": " + n + " is neither 0 (off) nor at least "
                + ZCOPY_THRESHOLD_MIN);
        }
        return n;
    }

    static boolean booleanProp(String name, boolean def) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return def;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + ": expected true or false, got '" + v + "'");
        };
    }

    static int intProp(String name, int def, int min, int max) {
        return (int) longProp(name, def, min, max);
    }

    static long longProp(String name, long def, long min, long max) {
        String v = System.getProperty(name);
        if (v == null || v.isBlank()) {
            return def;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": expected an integer " + min + " … " + max + ", got '" + v + "'", e);
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(name + ": " + n + " is outside " + min + " … " + max);
        }
        return n;
    }

    private static int checked(String what, int n, int min, int max) {
        if (n < min || n > max) {
            throw new IllegalArgumentException(what + " " + n + " is outside " + min + " … " + max);
        }
        return n;
    }

    /**
     * An independent copy.
     *
     * @return the copy
     */
    public SdpOptions copy() {
        SdpOptions c = new SdpOptions();
        c.bufferBytes = bufferBytes;
        c.receiveBuffers = receiveBuffers;
        c.sendBuffers = sendBuffers;
        c.spinNs = spinNs;
        c.connectTimeoutMs = connectTimeoutMs;
        c.closeTimeoutMs = closeTimeoutMs;
        c.keepAliveTimeMs = keepAliveTimeMs;
        c.keepAlive = keepAlive;
        c.noDelay = noDelay;
        c.lingerSeconds = lingerSeconds;
        c.flowControl = flowControl;
        c.zcopyThreshold = zcopyThreshold;
        c.creditCoalesce = creditCoalesce;
        return c;
    }

    /**
     * Sets the size of each receive buffer and send slot.
     *
     * @param bytes {@link #BUFFER_BYTES_MIN} … {@link #BUFFER_BYTES_MAX}, BSDH included
     * @return this
     */
    public SdpOptions bufferBytes(int bytes) {
        this.bufferBytes = checked("bufferBytes", bytes, BUFFER_BYTES_MIN, BUFFER_BYTES_MAX);
        return this;
    }

    /**
     * Sets the number of receive buffers.
     *
     * @param n {@link #RECEIVE_BUFFERS_MIN} … {@link #BUFFERS_MAX}
     * @return this
     */
    public SdpOptions receiveBuffers(int n) {
        this.receiveBuffers = checked("receiveBuffers", n, RECEIVE_BUFFERS_MIN, BUFFERS_MAX);
        return this;
    }

    /**
     * Sets the number of send slots.
     *
     * @param n {@link #BUFFERS_MIN} … {@link #BUFFERS_MAX}
     * @return this
     */
    public SdpOptions sendBuffers(int n) {
        this.sendBuffers = checked("sendBuffers", n, BUFFERS_MIN, BUFFERS_MAX);
        return this;
    }

    /**
     * Maps {@code SO_RCVBUF}: as many receive buffers as cover {@code bytes}, within the limits.
     *
     * @param bytes the requested receive-buffer size
     * @return this
     */
    public SdpOptions receiveBufferBytes(int bytes) {
        receiveBuffers = Math.max(RECEIVE_BUFFERS_MIN, clampCount(bytes));
        return this;
    }

    /**
     * Maps {@code SO_SNDBUF}: as many send slots as cover {@code bytes}, within the limits.
     *
     * @param bytes the requested send-buffer size
     * @return this
     */
    public SdpOptions sendBufferBytes(int bytes) {
        sendBuffers = clampCount(bytes);
        return this;
    }

    private int clampCount(int bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("buffer size must be positive: " + bytes);
        }
        long n = ((long) bytes + payloadBytes() - 1) / payloadBytes();
        return (int) Math.max(BUFFERS_MIN, Math.min(BUFFERS_MAX, n));
    }

    /**
     * Sets how long blocked operations spin before they park.
     *
     * @param ns nanoseconds, 0 parks at once
     * @return this
     */
    public SdpOptions spinNs(long ns) {
        if (ns < 0) {
            throw new IllegalArgumentException("spinNs must be >= 0: " + ns);
        }
        this.spinNs = ns;
        return this;
    }

    /**
     * Sets the connect timeout (CM exchange plus Hello/HelloAck).
     *
     * @param ms milliseconds, positive
     * @return this
     */
    public SdpOptions connectTimeoutMs(int ms) {
        this.connectTimeoutMs = checked("connectTimeoutMs", ms, 1, Integer.MAX_VALUE);
        return this;
    }

    /**
     * Sets how long a graceful close waits for the peer's DisConn.
     *
     * @param ms milliseconds, positive
     * @return this
     */
    public SdpOptions closeTimeoutMs(int ms) {
        this.closeTimeoutMs = checked("closeTimeoutMs", ms, 1, Integer.MAX_VALUE);
        return this;
    }

    /**
     * Sets the idle time before a keepalive probe.
     *
     * @param ms milliseconds, positive
     * @return this
     */
    public SdpOptions keepAliveTimeMs(long ms) {
        if (ms <= 0) {
            throw new IllegalArgumentException("keepAliveTimeMs must be positive: " + ms);
        }
        this.keepAliveTimeMs = ms;
        return this;
    }

    /**
     * {@code SO_KEEPALIVE}: probe an idle connection with a zero-length RDMA WRITE.
     *
     * @param on true to probe
     * @return this
     */
    public SdpOptions keepAlive(boolean on) {
        this.keepAlive = on;
        return this;
    }

    /**
     * {@code TCP_NODELAY}: send small writes at once instead of coalescing them while a message is in
     * flight.
     *
     * @param on true to disable coalescing
     * @return this
     */
    public SdpOptions noDelay(boolean on) {
        this.noDelay = on;
        return this;
    }

    /**
     * {@code SO_LINGER}: 0 makes close abortive (the peer sees a reset); negative is off.
     *
     * @param seconds the linger time, or negative for off
     * @return this
     */
    public SdpOptions lingerSeconds(int seconds) {
        this.lingerSeconds = seconds;
        return this;
    }

    /**
     * Sets the zero-copy threshold: blocking writes of direct buffers with at least this many bytes
     * remaining go by zero copy when the stack offers it and the peer negotiated it.
     *
     * @param bytes 0 (off) or at least {@link #ZCOPY_THRESHOLD_MIN}
     * @return this
     */
    public SdpOptions zcopyThreshold(int bytes) {
        if (bytes != 0 && bytes < ZCOPY_THRESHOLD_MIN) {
            throw new IllegalArgumentException("zcopyThreshold " + bytes + " is neither 0 (off) nor at least "
                + ZCOPY_THRESHOLD_MIN);
        }
        this.zcopyThreshold = bytes;
        return this;
    }

    /**
     * The zero-copy threshold.
     *
     * @return bytes, 0 when zero copy is off
     */
    public int zcopyThreshold() {
        return zcopyThreshold;
    }

    /**
     * Bytes of each buffer, BSDH included.
     *
     * @return bytes
     */
    public int bufferBytes() {
        return bufferBytes;
    }

    /**
     * Payload bytes of each buffer.
     *
     * @return {@link #bufferBytes()} less the 16-byte BSDH
     */
    public int payloadBytes() {
        return bufferBytes - 16;
    }

    /**
     * Receive buffers.
     *
     * @return the count
     */
    public int receiveBuffers() {
        return receiveBuffers;
    }

    /**
     * Send slots.
     *
     * @return the count
     */
    public int sendBuffers() {
        return sendBuffers;
    }

    /**
     * The spin window.
     *
     * @return nanoseconds
     */
    public long spinNs() {
        return spinNs;
    }

    /**
     * The connect timeout.
     *
     * @return milliseconds
     */
    public int connectTimeoutMs() {
        return connectTimeoutMs;
    }

    /**
     * The close timeout.
     *
     * @return milliseconds
     */
    public int closeTimeoutMs() {
        return closeTimeoutMs;
    }

    /**
     * The keepalive idle time.
     *
     * @return milliseconds
     */
    public long keepAliveTimeMs() {
        return keepAliveTimeMs;
    }

    /**
     * Whether keepalive probes are sent.
     *
     * @return {@code SO_KEEPALIVE}
     */
    public boolean keepAlive() {
        return keepAlive;
    }

    /**
     * Whether small writes go out at once.
     *
     * @return {@code TCP_NODELAY}
     */
    public boolean noDelay() {
        return noDelay;
    }

    /**
     * The linger time.
     *
     * @return seconds, or negative for off
     */
    public int lingerSeconds() {
        return lingerSeconds;
    }

    /**
     * Sets the flow-control scheme this side asks for.
     *
     * @param scheme the scheme; the connection uses it when the peer asks for the same
     * @return this
     */
    public SdpOptions flowControl(FlowControlScheme scheme) {
        if (scheme == null) {
            throw new IllegalArgumentException("flowControl must not be null");
        }
        this.flowControl = scheme;
        return this;
    }

    /**
     * The flow-control scheme this side asks for.
     *
     * @return the scheme
     */
    public FlowControlScheme flowControl() {
        return flowControl;
    }

    /**
     * Sets whether credit-based flow control coalesces writes into messages that have not gone yet
     * ({@link #CREDIT_COALESCE_PROP}).
     *
     * @param on false for seed 001 §4.1.1's scheme: a message per write, and no write while an earlier
     *     message waits for credits
     * @return this
     */
    public SdpOptions creditCoalesce(boolean on) {
        this.creditCoalesce = on;
        return this;
    }

    /**
     * Whether credit-based flow control coalesces writes ({@link #CREDIT_COALESCE_PROP}).
     *
     * @return false for a message per write
     */
    public boolean creditCoalesce() {
        return creditCoalesce;
    }

    /**
     * NIC-assisted flow control's device-handled part: Data messages posted beyond the peer's ring and
     * credits, half the send slots (seed 001 §4.3.2 splits the socket buffer in two parts).
     *
     * @return at least 1
     */
    public int deviceMessages() {
        return Math.max(1, sendBuffers / 2);
    }

    @Override
    public String toString() {
        return "SdpOptions{bufferBytes=" + bufferBytes + ", receiveBuffers=" + receiveBuffers + ", sendBuffers="
            + sendBuffers + ", spinNs=" + spinNs + ", noDelay=" + noDelay + ", keepAlive=" + keepAlive + ", linger="
            + lingerSeconds + ", flowControl=" + flowControl.configName() + ", zcopyThreshold=" + zcopyThreshold + ", creditCoalesce=" + creditCoalesce + '}';
    }
}
