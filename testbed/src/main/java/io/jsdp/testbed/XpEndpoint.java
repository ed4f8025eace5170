package io.jsdp.testbed;

import java.nio.ByteBuffer;

/**
 * What one end of a connection across processes tells the other when the connection manager
 * connects them: its queue pair, the protection domain remote keys must belong to, the segment of the
 * queue pair's outbound wire (which the peer's queue pair reads) and the segment of its device's
 * shared table (remote keys, doorbell). Segments are named by number, the owner being the node the
 * connection-manager message came from.
 *
 * @param qpNumber the queue pair's number
 * @param pdNumber its protection domain's number
 * @param wireSegment the number of its outbound wire's segment
 * @param deviceSegment the number of its device's segment
 * @param minRnrTimerNs how long a requester waits before it sends again a message this queue pair
 *     had no receive for
 */
record XpEndpoint(int qpNumber, int pdNumber, long wireSegment, long deviceSegment, long minRnrTimerNs) {
    /** Bytes of the encoded form. */
    static final int BYTES = 32;

    /**
     * Appends the encoded form at {@code b}'s position.
     *
     * @param b the buffer, with {@link #BYTES} remaining
     */
    void put(ByteBuffer b) {
        b.putInt(qpNumber).putInt(pdNumber).putLong(wireSegment).putLong(deviceSegment).putLong(minRnrTimerNs);
    }

    /**
     * Reads an encoded endpoint at {@code b}'s position.
     *
     * @param b the buffer
     * @return the endpoint
     */
    static XpEndpoint get(ByteBuffer b) {
        return new XpEndpoint(b.getInt(), b.getInt(), b.getLong(), b.getLong(), b.getLong());
    }
}
