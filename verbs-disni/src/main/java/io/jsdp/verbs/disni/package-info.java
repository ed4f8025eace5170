/**
 * The verbs port over DiSNI 2.1 ({@code com.ibm.disni:disni}): InfiniBand, RoCE and iWARP hardware through
 * libdisni. Built on DiSNI's {@code RdmaCm} and {@code RdmaVerbs} directly, not on its endpoint framework
 * (whose connect and accept hang on error events and whose completion thread loads native code).
 *
 * <p>DiSNI's quirks stop here (project reference {@code disni.md}): completion objects are reused and error
 * completions carry stale fields ({@link io.jsdp.verbs.disni.DisniCompletionQueue}); work requests are
 * snapshot when a call object is made, so call objects are cached and modified, not rebuilt
 * ({@link io.jsdp.verbs.disni.DisniQueuePair}); CM events carry no status and no private data, there is no
 * reject and no connect timeout, and the adapter runs its own CM event thread
 * ({@link io.jsdp.verbs.disni.DisniCmEventChannel}); addresses are IPv4 and queue pairs have four
 * scatter/gather entries. Every DiSNI status code and CM event type maps to the port in one table,
 * {@link io.jsdp.verbs.disni.DisniStatus}.
 */
package io.jsdp.verbs.disni;
