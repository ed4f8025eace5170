/**
 * The RDMA port of jsdp: idiomatic Java types for the verbs objects (device, protection domain,
 * memory region, completion queue and channel, reliable-connected queue pair, work requests and
 * completions) and the connection manager (ids, event channels, events).
 *
 * <p>Devices implement it: SoftRdma (module {@code testbed}) in software, DiSNI (module
 * {@code verbs-disni}) on RDMA hardware. Protocol code uses only this package, so it runs unchanged on
 * both. Devices are found with {@link java.util.ServiceLoader} and chosen by {@code jsdp.device}
 * ({@link io.jsdp.verbs.RdmaDevices}).
 *
 * <p>Conventions: posting and polling are hot paths that allocate nothing and return
 * {@link io.jsdp.verbs.Errno} codes; slow-path calls throw {@link io.jsdp.verbs.VerbsException}.
 * Addresses are in the device's address space ({@link io.jsdp.verbs.MemoryRegion#address()} plus an
 * offset). The semantics, including every error case, are those of the verbs man pages and Linux
 * rxe as listed in the project's reference {@code verbs-semantics.md}; the conformance suite in this
 * module's test-jar checks them on every device.
 */
package io.jsdp.verbs;
