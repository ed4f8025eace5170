/**
 * jsdp's public API: the drop-in {@link io.jsdp.SdpSelectorProvider}, its socket options
 * ({@link io.jsdp.SdpSocketOptions}) and device memory for zero-copy writes ({@link io.jsdp.Sdp}).
 */
package io.jsdp;
