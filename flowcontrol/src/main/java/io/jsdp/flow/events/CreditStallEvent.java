package io.jsdp.flow.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A writer of an SDP connection could put nothing more on the wire for want of credits from the peer.
 * The event's duration runs from the write that took nothing until flow control allowed a message
 * again (or the connection ended).
 */
@Name("io.jsdp.CreditStall")
@Label("jsdp Credit Stall")
@Category("jsdp")
@Description("An SDP writer stalled for want of credits; duration until credits came back.")
@StackTrace(false)
public final class CreditStallEvent extends Event {
    /** The engine's connection id. */
    @Label("Connection Id")
    public long connectionId;

    /** The remote endpoint. */
    @Label("Remote")
    public String remote;

    /** The send credits left when the stall began. */
    @Label("Credits At Start")
    public int credits;

    /** Whether the stall ended because the connection ended. */
    @Label("Ended By Close")
    public boolean endedByClose;
}
