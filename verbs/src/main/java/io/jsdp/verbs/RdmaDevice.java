package io.jsdp.verbs;

import io.jsdp.ras.ResourceTracker;

/**
 * An opened RDMA device ({@code struct ibv_context} plus its connection manager): the factory of every
 * other object of the port. Every object it creates is registered with its {@link #resources()}
 * tracker; {@link #close()} reports what is still open and releases it.
 */
public interface RdmaDevice extends AutoCloseable {

    /**
     * The device name, e.g. {@code "soft0"} or {@code "mlx5_0"}.
     *
     * @return the name
     */
    String name();

    /**
     * The provider that opened the device, e.g. {@code "soft"} or {@code "disni"}.
     *
     * @return the provider name
     */
    String provider();

    /**
     * The device's limits.
     *
     * @return the capabilities
     */
    DeviceCapabilities capabilities();

    /**
     * Allocates a protection domain.
     *
     * @return the new domain
     * @throws VerbsException when the device is closed or out of resources
     */
    ProtectionDomain allocateProtectionDomain() throws VerbsException;

    /**
     * Creates a completion channel, through which armed completion queues report events.
     *
     * @return the new channel
     * @throws VerbsException when the device is closed
     */
    CompletionChannel createCompletionChannel() throws VerbsException;

    /**
     * Creates a completion queue.
     *
     * @param channel the channel for its events, or null for a queue that is only polled
     * @param entries the minimum number of completions it holds before it overflows
     * @return the new queue
     * @throws VerbsException when {@code entries} exceeds {@link DeviceCapabilities#maxCqe()}
     */
    CompletionQueue createCompletionQueue(CompletionChannel channel, int entries) throws VerbsException;

    /**
     * Allocates device memory: a buffer the device's peers can reach with RDMA even across processes
     * (for SoftRdma, shared memory; for hardware, ordinary direct memory). Register it with
     * {@link ProtectionDomain#register} before use.
     *
     * @param bytes the size
     * @return the memory; close it to free it
     * @throws VerbsException when the size is not positive or the memory cannot be had
     */
    DeviceMemory allocateMemory(int bytes) throws VerbsException;

    /**
     * Creates a connection-manager event channel ({@code rdma_create_event_channel}).
     *
     * @return the new channel
     * @throws VerbsException when the device is closed
     */
    CmEventChannel createEventChannel() throws VerbsException;

    /**
     * Creates a connection-manager id for the reliable-connected port space
     * ({@code rdma_create_id(..., RDMA_PS_TCP)}).
     *
     * @param channel the channel its events go to
     * @return the new id
     * @throws VerbsException when the device or channel is closed
     */
    CmId createId(CmEventChannel channel) throws VerbsException;

    /**
     * The tracker holding every open object of this device.
     *
     * @return the resource tracker
     */
    ResourceTracker resources();

    /**
     * Whether the device is still open.
     *
     * @return true until {@link #close()}
     */
    boolean isOpen();

    /**
     * Closes the device: reports every object still open (with where it was created) through the
     * tracker's leak check, then releases them. Idempotent.
     */
    @Override
    void close();
}
