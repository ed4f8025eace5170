/**
 * Java Flight Recorder events of jsdp connections (issue 10): lifecycle ({@link
 * io.jsdp.flow.events.ConnectionEstablishedEvent}, {@link io.jsdp.flow.events.ConnectionClosedEvent},
 * {@link io.jsdp.flow.events.FallbackEvent}) and stalls ({@link io.jsdp.flow.events.CreditStallEvent}).
 * Every event is in category {@code jsdp} and named {@code io.jsdp.*}, so
 * {@code jfr print --categories jsdp rec.jfr} lists them. The code that emits one first asks
 * {@code isEnabled()}/{@code shouldCommit()}: with no recording running an event costs a check.
 */
package io.jsdp.flow.events;
