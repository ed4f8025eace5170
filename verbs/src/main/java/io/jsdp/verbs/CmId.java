package io.jsdp.verbs;

import java.net.InetSocketAddress;

/**
 * A connection-manager id ({@code struct rdma_cm_id}) of the reliable-connected port space. Every
 * asynchronous step reports through an event on the id's channel, and every id that starts
 * connecting ends in a terminal event ({@link CmEventType#isTerminal()}): none is left waiting.
 *
 * <p>Active side: {@link #resolveAddress} → ADDR_RESOLVED, {@link #resolveRoute} → ROUTE_RESOLVED,
 * {@link #createQueuePair}, {@link #connect} → ESTABLISHED | REJECTED | UNREACHABLE. Passive side:
 * {@link #bind}, {@link #listen} → CONNECT_REQUEST carrying a new id, on which the application calls
 * {@link #createQueuePair} and {@link #accept} (→ ESTABLISHED) or {@link #reject}.
 * {@link #disconnect} moves the local queue pair to ERROR and gives both sides DISCONNECTED; the
 * peer's queue pair stays in RTS until the peer disconnects too.
 */
public interface CmId extends AutoCloseable {

    /**
     * The device the id is bound to.
     *
     * @return the device
     */
    RdmaDevice device();

    /**
     * The channel of the id's events.
     *
     * @return the channel
     */
    CmEventChannel channel();

    /**
     * Binds to a local address ({@code rdma_bind_addr}); port 0 picks an ephemeral port.
     *
     * @param address the local address, or the wildcard address
     * @throws VerbsException {@link Errno#EADDRINUSE} when the port is taken, {@link Errno#EINVAL}
     *     when already bound or the address is not on this host
     */
    void bind(InetSocketAddress address) throws VerbsException;

    /**
     * Listens for connect requests ({@code rdma_listen}).
     *
     * @param backlog the most unanswered connect requests; more are rejected
     * @throws VerbsException {@link Errno#EINVAL} when not bound
     */
    void listen(int backlog) throws VerbsException;

    /**
     * Resolves a destination ({@code rdma_resolve_addr}) → ADDR_RESOLVED or ADDR_ERROR.
     *
     * @param destination the peer's address and port
     * @param timeoutMs how long resolution may take
     * @throws VerbsException {@link Errno#EINVAL} in the wrong state
     */
    void resolveAddress(InetSocketAddress destination, int timeoutMs) throws VerbsException;

    /**
     * Resolves a destination from a given source ({@code rdma_resolve_addr} with {@code src_addr}): the
     * connection's local address is {@code source} (a wildcard address: the one routing picks; port 0:
     * one of the device's). A device that cannot take a source (DiSNI passes none to librdmacm) picks
     * its own, as {@link #resolveAddress(InetSocketAddress, int)} does.
     *
     * @param source the local address and port to connect from, or null for the device's choice
     * @param destination the peer's address and port
     * @param timeoutMs how long resolution may take
     * @throws VerbsException {@link Errno#EINVAL} in the wrong state, {@link Errno#EADDRNOTAVAIL} for a
     *     source that is not an address of this host
     */
    default void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMs)
        throws VerbsException {
        resolveAddress(destination, timeoutMs);
    }

    /**
     * Resolves the route to the resolved destination ({@code rdma_resolve_route}) → ROUTE_RESOLVED or
     * ROUTE_ERROR.
     *
     * @param timeoutMs how long resolution may take
     * @throws VerbsException {@link Errno#EINVAL} before ADDR_RESOLVED
     */
    void resolveRoute(int timeoutMs) throws VerbsException;

    /**
     * Creates the id's queue pair ({@code rdma_create_qp}) in {@link QpState#INIT}; receives may be
     * posted at once.
     *
     * @param pd the protection domain
     * @param attributes sizes and completion queues
     * @return the queue pair, closed with the id
     * @throws VerbsException {@link Errno#EINVAL} for a missing completion queue, sizes beyond the
     *     device's capabilities, or an id that already has a queue pair
     */
    QueuePair createQueuePair(ProtectionDomain pd, QueuePairAttributes attributes) throws VerbsException;

    /**
     * The id's queue pair.
     *
     * @return the queue pair, or null before {@link #createQueuePair}
     */
    QueuePair queuePair();

    /**
     * Connects to the resolved destination ({@code rdma_connect}) → ESTABLISHED, REJECTED or
     * UNREACHABLE after {@link ConnectionParameters#connectTimeoutMs()}.
     *
     * @param parameters retry counts, private data, timeout
     * @throws VerbsException {@link Errno#EINVAL} before ROUTE_RESOLVED, without a queue pair, or with
     *     more than {@link ConnectionParameters#MAX_CONNECT_PRIVATE_DATA} bytes of private data
     */
    void connect(ConnectionParameters parameters) throws VerbsException;

    /**
     * Accepts a connect request on a passive id ({@code rdma_accept}); its queue pair goes to RTS at
     * once, then both sides get ESTABLISHED.
     *
     * @param parameters retry counts and private data
     * @throws VerbsException {@link Errno#EINVAL} when the id has no pending request or no queue pair
     */
    void accept(ConnectionParameters parameters) throws VerbsException;

    /**
     * Rejects a connect request on a passive id ({@code rdma_reject}): the active side gets REJECTED
     * with status {@link CmEvent#REJECT_CONSUMER} and the private data.
     *
     * @param privateData up to {@link ConnectionParameters#MAX_REJECT_PRIVATE_DATA} bytes, or null
     * @throws VerbsException {@link Errno#EINVAL} when the id has no pending request
     */
    void reject(byte[] privateData) throws VerbsException;

    /**
     * Disconnects ({@code rdma_disconnect}): the local queue pair goes to ERROR (flushing), both sides
     * get DISCONNECTED. Calling it after the peer disconnected moves the local queue pair to ERROR and
     * delivers nothing more.
     *
     * @throws VerbsException {@link Errno#EINVAL} when the id is not connected
     */
    void disconnect() throws VerbsException;

    /**
     * The local address.
     *
     * @return the bound or resolved source address, or null
     */
    InetSocketAddress localAddress();

    /**
     * The peer's address.
     *
     * @return the destination or the connecting peer, or null
     */
    InetSocketAddress remoteAddress();

    /**
     * Destroys the id ({@code rdma_destroy_id}) and its queue pair. A connected peer gets
     * DISCONNECTED, a pending connect request is rejected, a listener stops listening. Idempotent.
     */
    @Override
    void close();
}
