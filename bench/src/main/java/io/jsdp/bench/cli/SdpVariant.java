package io.jsdp.bench.cli;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SpinGovernor;
import io.jsdp.ras.Trace;
import io.jsdp.testbed.shm.ShmSettings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The SDP variants the CLI can run side by side: a name (the CSV's {@code variant} column), the
 * system properties given to <em>both</em> JVMs of the run, and one line saying what it is and
 * whether its waits spin or block. Add a variant here and {@code --sdp-variants} takes it; the
 * registry is documented in {@code docs/benchmarks.md}.
 *
 * @param name what {@code --sdp-variants} and the CSV call it
 * @param properties {@code -D} settings for the client and the server JVM
 * @param poll whether both ends use non-blocking channels and spin on them (as {@code tcp-poll})
 *     instead of blocking ones
 * @param waits how a blocked read or write waits ("spin 20 µs, then park", for the report)
 * @param description one line for {@code --list-variants} and the report
 */
record SdpVariant(String name, Map<String, String> properties, boolean poll, String waits, String description) {

    /** The variant the targets call "spinning": the defaults. */
    static final String DEFAULT = "credit";
    /** {@link #DEFAULT} with tracing compiled out: the tracing-overhead baseline (issue 10). */
    static final String CREDIT_NOTRACE = "credit-notrace";
    /**
     * Credit-based flow control without coalescing ({@code jsdp.credit.coalesce=false}): seed 001
     * §4.1.1's scheme, the baseline of the thesis' flow-control experiments (issue 8).
     */
    static final String CREDIT_THESIS = "credit-thesis";
    /** The variant the targets call "blocking (spin window 0)". */
    static final String BLOCKING = "spin0";
    /** The defaults with adaptive spinning off: every wait spins the whole window (issue 27's A/B). */
    static final String SPIN_FIXED = "spin-fixed";
    /** Like {@code tcp-poll}: never parks, whatever the spin window. */
    static final String POLL = "poll";
    /** Buffer copy from device memory: the baseline of {@link #ZCOPY}. */
    static final String BCOPY = "bcopy";
    /** Zero copy (issue 9). */
    static final String ZCOPY = "zcopy";
    /**
     * Bench property: the workers' direct buffers come from {@code io.jsdp.Sdp.allocateDirect} (device
     * memory, which zero copy can advertise) instead of {@code ByteBuffer.allocateDirect}.
     */
    static final String DEVICE_MEMORY_PROP = "jsdp.bench.deviceMemory";

    private static final Map<String, SdpVariant> REGISTRY = new LinkedHashMap<>();

    static {
        add(new SdpVariant(DEFAULT, Map.of(SdpOptions.FLOW_CONTROL_PROP, FlowControlScheme.CREDIT.configName()), false,
            "adaptive spin of at most " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "the defaults, credit-based flow control (the spec) asked for explicitly, buffer copy, adaptive spinning of"
                + " at most " + SdpOptions.SPIN_NS_PROP + "=" + SdpOptions.SPIN_NS_DEFAULT + " ns, SoftRdma device"));
        add(new SdpVariant("packetized", Map.of(SdpOptions.FLOW_CONTROL_PROP, FlowControlScheme.PACKETIZED.configName()), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "packetized flow control (seed 001 §4.1.3): RDMA WRITE into the peer's byte ring, data held for lack of"
                + " room moves only in the application's calls; otherwise the defaults"));
        add(new SdpVariant("nic", Map.of(SdpOptions.FLOW_CONTROL_PROP, FlowControlScheme.NIC.configName()), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "NIC-assisted flow control (seed 001 §4.3): virtual window, half the send slots posted beyond the credits"
                + " for the device to send (RNR retry); otherwise the defaults"));
        add(new SdpVariant(BLOCKING, Map.of(SdpOptions.SPIN_NS_PROP, "0", ShmSettings.SPIN_NS_PROP, "0"), false,
            "park at once",
            "credit, no spinning: a blocked read or write parks at once (" + SdpOptions.SPIN_NS_PROP + "=0), and so"
                + " do SoftRdma's waiters (" + ShmSettings.SPIN_NS_PROP + "=0); what a CPU-frugal deployment gets"));
        add(new SdpVariant(SPIN_FIXED, Map.of(SpinGovernor.ADAPTIVE_PROP, "false"), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "the defaults with adaptive spinning off (" + SpinGovernor.ADAPTIVE_PROP + "=false): every blocked read or"
                + " write spins the whole window, whatever the load"));
        add(new SdpVariant(POLL, Map.of(), true, "spin (non-blocking busy-poll)",
            "credit, but both ends use non-blocking channels and spin on read/write as tcp-poll does: never parks"));
        add(new SdpVariant(BCOPY, Map.of(DEVICE_MEMORY_PROP, "true", SdpOptions.ZCOPY_THRESHOLD_PROP, "0"), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "buffer copy from device memory (Sdp.allocateDirect buffers, " + SdpOptions.ZCOPY_THRESHOLD_PROP + "=0): "
                + "the baseline zcopy is compared with"));
        add(new SdpVariant(ZCOPY, Map.of(DEVICE_MEMORY_PROP, "true"), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "zero copy: blocking writes of Sdp.allocateDirect buffers of at least " + SdpOptions.ZCOPY_THRESHOLD_PROP + "="
                + SdpOptions.ZCOPY_THRESHOLD_DEFAULT + " bytes go by SrcAvail / RDMA READ into the reader's direct buffer; "
                + "smaller ones by buffer copy"));
        add(new SdpVariant(CREDIT_NOTRACE, Map.of(SdpOptions.FLOW_CONTROL_PROP, FlowControlScheme.CREDIT.configName(),
                Trace.ENABLED_PROP, "false"), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "credit with tracing compiled out (" + Trace.ENABLED_PROP + "=false in both JVMs): the baseline of the"
                + " tracing-overhead target (issue 10), compared with credit in A/B rounds (--rounds)"));
        add(new SdpVariant(CREDIT_THESIS, Map.of(SdpOptions.FLOW_CONTROL_PROP, FlowControlScheme.CREDIT.configName(),
                SdpOptions.CREDIT_COALESCE_PROP, "false"), false,
            "spin " + SdpOptions.SPIN_NS_DEFAULT / 1000 + " µs, then park",
            "credit-based flow control as seed 001 §4.1.1 has it, the thesis' baseline: every write its own message,"
                + " none while an earlier one waits for credits (" + SdpOptions.CREDIT_COALESCE_PROP + "=false);"
                + " otherwise the defaults"));
    }

    SdpVariant {
        properties = Map.copyOf(properties);
    }

    private static void add(SdpVariant v) {
        if (REGISTRY.putIfAbsent(v.name, v) != null) {
            throw new IllegalStateException("two SDP variants named " + v.name);
        }
    }

    /**
     * The variant called {@code name}.
     *
     * @throws IllegalArgumentException naming the known ones when there is none
     */
    static SdpVariant named(String name) {
        SdpVariant v = REGISTRY.get(name);
        if (v == null) {
            throw new IllegalArgumentException("unknown SDP variant '" + name + "'; known: " + String.join(",", names()));
        }
        return v;
    }

    /** Every registered name, in registration order. */
    static List<String> names() {
        return new ArrayList<>(REGISTRY.keySet());
    }

    /** The properties as {@code -Dname=value} JVM options, sorted by name. */
    List<String> jvmOptions() {
        List<String> out = new ArrayList<>();
        properties.keySet().stream().sorted().forEach(k -> out.add("-D" + k + "=" + properties.get(k)));
        return out;
    }
}
