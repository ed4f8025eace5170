package io.jsdp.provider;

/**
 * A jsdp channel the hybrid selector can watch: part of its readiness comes from SDP, part possibly
 * from a JDK delegate channel (a TCP fallback connection, the TCP half of a server), which the key
 * registers in the inner selector. The selector polls {@link #nativeReadyOps()} only for keys on its
 * ready list, so the channel must call {@link HybridSelector.HybridKey#wakeSelector()} (an event) or
 * {@link HybridSelector.HybridKey#pollAgain()} (a state change of its own) whenever what this method
 * returns may have changed for the better.
 */
interface SdpSelectable {
    /**
     * A selector registered the channel: watch its SDP side for it, and hand it the current delegate.
     *
     * @param key the new key
     */
    void keyAdded(HybridSelector.HybridKey key);

    /**
     * The key was deregistered.
     *
     * @param key the key
     */
    void keyRemoved(HybridSelector.HybridKey key);

    /**
     * The NIO operations ready on the SDP side now, whatever the interest.
     *
     * @return a combination of {@link java.nio.channels.SelectionKey} ops
     */
    int nativeReadyOps();

    /**
     * The wake channel of the channel's SDP connection, through which its peer wakes a selector
     * waiting for it directly ({@link io.jsdp.verbs.WakeChannel}), or null: none (yet), or not SDP.
     *
     * @return the wake channel, or null
     */
    default io.jsdp.verbs.WakeChannel wakeChannel() {
        return null;
    }

    /**
     * Whether the completion of one of the connection's sends must wake a selector waiting for it:
     * output of its own waits for room.
     *
     * @return true when sends matter
     */
    default boolean wakeOnSends() {
        return true;
    }
}
