package io.jsdp.testbed.shm;

/**
 * Told when a peer process leaves the fabric, so the layers above can fail what they share with it
 * (its queue pairs to ERROR, its connections DISCONNECTED) within a bound.
 */
@FunctionalInterface
public interface PeerListener {
    /**
     * A connected peer is gone: its control connection reached end-of-stream or failed (the process
     * died, even by kill -9, or closed its node), or the liveness sweep found the process dead. Called
     * once per loss, on the node's thread: return quickly and do not block.
     *
     * @param peer the peer
     */
    void onPeerGone(NodeId peer);
}
