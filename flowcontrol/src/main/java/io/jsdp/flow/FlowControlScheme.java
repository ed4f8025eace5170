package io.jsdp.flow;

import io.jsdp.flow.credit.CreditFlowControl;
import io.jsdp.flow.nicassisted.NicAssistedFlowControl;
import io.jsdp.flow.packetized.PacketizedFlowControl;
import java.util.Locale;

/**
 * The flow-control schemes of seed 001 ch. 4, as configuration names them ({@code jsdp.flowControl})
 * and as the Hello's capability bits carry them ({@code docs/protocol.md} section 3).
 *
 * <p>A side asks for one scheme: the Hello carries the active side's wish as one capability bit (none
 * for credit-based); the passive side answers in the HelloAck with the same bit when it wishes the same
 * scheme, else with none. A peer without the bits (or with another wish) gets credit-based.
 */
public enum FlowControlScheme {
    /** The specification's credit-based flow control: one message per fixed-size receive buffer. */
    CREDIT("credit", 0),
    /** Packetized: the sender manages the receiver's buffer as one byte ring filled by RDMA WRITE. */
    PACKETIZED("packetized", 1),
    /**
     * NIC-assisted: packetized's ring while the peer's ring has room, then messages of at most the virtual
     * window held by the device until the peer posts a buffer (RNR retry).
     */
    NIC("nic", 1 << 1);

    /** Every flow-control capability bit a jsdp peer may set; others of {@link #CAPABILITY_MASK} are a violation. */
    public static final int KNOWN_BITS = PACKETIZED.bit | NIC.bit;
    /** The capability word's flow-control field (its low byte); the other bits belong to other extensions. */
    public static final int CAPABILITY_MASK = 0xFF;
    /**
     * The ring schemes ({@link #usesRing()}) only: a RingData may carry its run inline, after its 28 bytes
     * ({@code docs/protocol.md} section 5b). A side asking for a ring scheme offers it; the passive side
     * echoes it when it agrees to the scheme; a side sends inline runs only to a peer that negotiated it,
     * and a peer that did not may not send them ({@code LENGTH_MISMATCH}).
     */
    public static final int CAPABILITY_RING_INLINE = 1 << 10;

    private final String configName;
    private final int bit;

    FlowControlScheme(String configName, int bit) {
        this.configName = configName;
        this.bit = bit;
    }

    /**
     * The name configuration uses.
     *
     * @return {@code "credit"}, {@code "packetized"} or {@code "nic"}
     */
    public String configName() {
        return configName;
    }

    /**
     * The Hello capability bit asking for this scheme.
     *
     * @return the bit; 0 for credit-based (the specification's, no bit)
     */
    public int capabilityBit() {
        return bit;
    }

    /**
     * Whether the scheme's data travels in the receiver's byte ring (RDMA WRITE and RingData): packetized,
     * and NIC-assisted, which extends it (seed 001 §4.3). Asking for one advertises a ring in the Hello.
     *
     * @return true for {@link #PACKETIZED} and {@link #NIC}
     */
    public boolean usesRing() {
        return this != CREDIT;
    }

    /**
     * The scheme a configuration value names.
     *
     * @param name {@code credit}, {@code packetized} or {@code nic} (case ignored)
     * @return the scheme
     * @throws IllegalArgumentException for any other name
     */
    public static FlowControlScheme fromName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (FlowControlScheme s : values()) {
            if (s.configName.equals(n)) {
                return s;
            }
        }
        throw new IllegalArgumentException("flow control '" + name + "': expected credit, packetized or nic");
    }

    /**
     * The scheme one capability word asks for.
     *
     * @param capabilities the Hello's or HelloAck's capability word (only its low byte is looked at)
     * @return the scheme, or null when the low byte has unknown bits or more than one bit
     */
    public static FlowControlScheme fromCapabilities(int capabilities) {
        return switch (capabilities & CAPABILITY_MASK) {
            case 0 -> CREDIT;
            case 1 -> PACKETIZED;
            case 1 << 1 -> NIC;
            default -> null;
        };
    }

    /**
     * What a passive side with wish {@code own} answers to a Hello wishing {@code offered}: the scheme
     * when both wish it, else credit-based.
     *
     * @param offered the active side's wish
     * @param own the passive side's wish
     * @return the scheme the connection uses
     */
    public static FlowControlScheme negotiate(FlowControlScheme offered, FlowControlScheme own) {
        return offered == own ? own : CREDIT;
    }

    /**
     * A fresh strategy for one connection.
     *
     * @param deviceMessages NIC-assisted: data messages the device may hold beyond the peer's credits
     * @return the strategy
     */
    public FlowControl create(int deviceMessages) {
        return switch (this) {
            case CREDIT -> new CreditFlowControl();
            case PACKETIZED -> new PacketizedFlowControl();
            case NIC -> new NicAssistedFlowControl(deviceMessages);
        };
    }
}
