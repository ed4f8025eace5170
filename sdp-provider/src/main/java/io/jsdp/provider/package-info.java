/**
 * The provider's internals: the hybrid selector, delegation to the JDK's provider.
 */
package io.jsdp.provider;
