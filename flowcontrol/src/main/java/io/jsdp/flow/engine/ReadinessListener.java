package io.jsdp.flow.engine;

/**
 * Told when a connection's readiness may have changed (data arrived, space freed, connected, failed),
 * and each time the peer finished with the last buffer a {@link SdpConnection#HOLDS_BUFFER} write
 * left advertised, even when the ready operations are the same as at the last call: that buffer is
 * settled only by the application's next such write.
 * Called from the stack's progress or connection-manager thread with no engine lock held; it must
 * return quickly (wake a selector, unpark a thread) and may call back into the connection.
 */
@FunctionalInterface
public interface ReadinessListener {
    /**
     * Readiness may have changed.
     *
     * @param connection the connection
     * @param readyOps its {@link SdpConnection#readyOps()} at the time of the call
     */
    void onReady(SdpConnection connection, int readyOps);
}
