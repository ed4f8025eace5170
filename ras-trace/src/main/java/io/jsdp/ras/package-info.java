/**
 * Reliability, availability and serviceability for jsdp (seed 000): leveled, run-time tunable
 * tracing, the always-on flight-recorder ring and the resource tracker / leak detector.
 *
 * <h2>Trace levels</h2>
 * <table>
 *   <caption>Levels of {@link io.jsdp.ras.TraceLevel}, their use and slf4j level</caption>
 *   <tr><th>level</th><th>name</th><th>for</th><th>slf4j</th></tr>
 *   <tr><td>1</td><td>ERROR</td><td>failures</td><td>error</td></tr>
 *   <tr><td>2</td><td>RARE</td><td>set-up, tear-down, state changes</td><td>info</td></tr>
 *   <tr><td>4</td><td>ENTRY_EXIT</td><td>API function entry and exit</td><td>debug</td></tr>
 *   <tr><td>5</td><td>INTERNALS</td><td>inside API functions</td><td>debug</td></tr>
 *   <tr><td>7</td><td>HOT_ENTRY_EXIT</td><td>hot-path entry and exit</td><td>trace</td></tr>
 *   <tr><td>8</td><td>HOT_INTERNALS</td><td>inside hot-path functions</td><td>trace</td></tr>
 *   <tr><td>9</td><td>DATA</td><td>data dumps</td><td>trace</td></tr>
 * </table>
 *
 * <h2>One level check</h2>
 * Every record is guarded by {@link io.jsdp.ras.TraceComponent#on(int)}, one volatile load and
 * one compare, so tracing that is off costs that and nothing more:
 * <pre>{@code if (T.on(TraceLevel.INTERNALS)) T.record(TraceLevel.INTERNALS, "cq.arm", cqn);}</pre>
 * A record carries its location (component and a constant event name) and up to four
 * {@code long} data words. Levels are set per component by {@code -Djsdp.trace=*:2,cm:5} and
 * changed at run time by {@link io.jsdp.ras.Trace#configure(String)}.
 *
 * <h2>Flight recorder</h2>
 * Records at level 2 and below always go to the {@link io.jsdp.ras.FlightRecorder}, an in-memory
 * ring, whatever the configured level; the log gets them only if the level allows. When an error
 * is reported, the ring holds the rare events that led to it: first-failure data capture has
 * history without anything being logged. Appending is lock-free and allocates nothing.
 *
 * <h2>Resource tracker</h2>
 * A {@link io.jsdp.ras.ResourceTracker} per scope (a device) records every resource with owner and
 * allocation site, and reports those still open at close. {@code -Djsdp.leakDetection} is
 * {@code off}, {@code sampled} (default: all counted, one stack in
 * {@code jsdp.leakDetection.samplingInterval} captured) or {@code all} (every stack). A
 * {@link io.jsdp.ras.LeakDetector} closes and reports objects the application dropped without closing
 * (channels), with the frame that opened them.
 *
 * <h2>Structure markers</h2>
 * {@link io.jsdp.ras.StructureMarkers} puts a known value between the buffers of a region (receive
 * buffers, a ring's slots) and checks it before a buffer is used: one load and compare.
 *
 * <h2>Tracing compiled out</h2>
 * {@code -Djsdp.trace.enabled=false}, read once into a {@code static final}, makes every level check
 * a constant {@code false}: the JIT removes the guarded code, as if the statements were not there.
 */
package io.jsdp.ras;
