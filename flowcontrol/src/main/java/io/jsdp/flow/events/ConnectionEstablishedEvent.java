package io.jsdp.flow.events;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A jsdp connection became established, over SDP or over its TCP fallback. */
@Name("io.jsdp.ConnectionEstablished")
@Label("jsdp Connection Established")
@Category("jsdp")
@Description("A jsdp stream connection became established: which transport, flow control and device it uses.")
@StackTrace(false)
public final class ConnectionEstablishedEvent extends Event {
    /** The engine's connection id ({@code -1} for TCP). */
    @Label("Connection Id")
    public long connectionId;

    /** {@code "sdp"} or {@code "tcp"}. */
    @Label("Transport")
    public String transport;

    /** Why the connection is on TCP, or null over SDP. */
    @Label("Fallback Reason")
    public String reason;

    /** The flow-control scheme ({@code "credit"}, ...), or null over TCP. */
    @Label("Flow Control")
    public String flowControl;

    /** The RDMA device, or null over TCP. */
    @Label("Device")
    public String device;

    /** The local endpoint. */
    @Label("Local")
    public String local;

    /** The remote endpoint. */
    @Label("Remote")
    public String remote;

    /** Whether this side connected (false: accepted). */
    @Label("Active")
    public boolean active;
}
