package io.jsdp.flow.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** A jsdp socket went to TCP instead of SDP. */
@Name("io.jsdp.Fallback")
@Label("jsdp TCP Fallback")
@Category("jsdp")
@Description("A jsdp socket uses TCP instead of SDP, and why.")
public final class FallbackEvent extends Event {
    /** The reason's kind: {@code no-listener}, {@code unreachable}, {@code timeout}, {@code rule}, ... */
    @Label("Kind")
    public String kind;

    /** The reason in words, as {@code SdpSocketOptions.TRANSPORT} gives it. */
    @Label("Reason")
    public String reason;

    /** The remote endpoint (the local one for a listener). */
    @Label("Address")
    public String address;
}
