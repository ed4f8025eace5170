package io.jsdp.verbs;

/**
 * A device's limits ({@code struct ibv_device_attr}, the fields SDP needs).
 *
 * @param maxQpWr the largest work queue a queue pair may have
 * @param maxSge the most scatter/gather entries per work request
 * @param maxInlineData the most bytes a request may carry inline
 * @param maxCqe the largest completion queue
 * @param maxMrSize the largest memory region in bytes
 * @param atomics whether atomic operations are supported
 */
public record DeviceCapabilities(int maxQpWr, int maxSge, int maxInlineData, int maxCqe, long maxMrSize,
                                 boolean atomics) {
}
