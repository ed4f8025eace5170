/**
 * jsdp's public API: the drop-in {@link io.jsdp.SdpSelectorProvider}.
 */
package io.jsdp;
