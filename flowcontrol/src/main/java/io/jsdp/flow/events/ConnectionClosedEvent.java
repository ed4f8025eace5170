package io.jsdp.flow.events;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/** A jsdp connection ended: its totals, and its failure when it failed. */
@Name("io.jsdp.ConnectionClosed")
@Label("jsdp Connection Closed")
@Category("jsdp")
@Description("A jsdp stream connection ended (SDP: its resources were released; TCP: the channel closed).")
@StackTrace(false)
public final class ConnectionClosedEvent extends Event {
    /** The engine's connection id ({@code -1} for TCP). */
    @Label("Connection Id")
    public long connectionId;

    /** {@code "sdp"} or {@code "tcp"}. */
    @Label("Transport")
    public String transport;

    /** The local endpoint. */
    @Label("Local")
    public String local;

    /** The remote endpoint. */
    @Label("Remote")
    public String remote;

    /** Payload bytes sent. */
    @Label("Bytes Sent")
    @DataAmount
    public long bytesSent;

    /** Payload bytes received. */
    @Label("Bytes Received")
    @DataAmount
    public long bytesReceived;

    /** SDP messages sent (0 over TCP). */
    @Label("Messages Sent")
    public long messagesSent;

    /** SDP messages received (0 over TCP). */
    @Label("Messages Received")
    public long messagesReceived;

    /** Credit stalls (0 over TCP). */
    @Label("Credit Stalls")
    public long creditStalls;

    /** Time spent in credit stalls. */
    @Label("Credit Stall Time")
    @Timespan(Timespan.NANOSECONDS)
    public long creditStallTime;

    /** Receiver-not-ready retries of the queue pair's sends; -1 where the device does not count them, 0 over TCP. */
    @Label("RNR Retries")
    public long rnrRetries;

    /** The failure ({@code "RESET_BY_PEER: ..."}), or null when the connection ended well. */
    @Label("Failure")
    public String failure;
}
