package io.jsdp.flow.engine;

import io.jsdp.ras.FfdcRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Issue 10, acceptance 1: what every connection FFDC record must hold, whatever the failure kind —
 * the kind, the connection's id and endpoints, its state and failure, the credits, the sequence
 * numbers, the queue pair and its state, the occupancy of the receive buffers and send slots, the
 * counters, and the flight recorder's last records with this connection's own state changes.
 */
public final class FfdcContent {
    private FfdcContent() {
    }

    /**
     * Fails listing every missing field.
     *
     * @param r the record
     * @param kind its expected kind, e.g. {@code "connection.DEVICE_ERROR"}
     * @param c the connection it is about
     */
    public static void assertComplete(FfdcRecord r, String kind, SdpConnection c) {
        List<String> missing = new ArrayList<>();
        String s = r.snapshot();
        check(missing, r.kind().equals(kind), "kind " + kind + " (is " + r.kind() + ")");
        check(missing, r.component().equals("sdp"), "component sdp");
        check(missing, r.summary().startsWith("connection " + c.id() + " " + c.failure() + ": "),
            "summary 'connection " + c.id() + " " + c.failure() + ": ...'");
        check(missing, s.startsWith("connection " + c.id() + (c.isActive() ? " active" : " passive") + " device "),
            "id, side and device");
        check(missing, s.contains("\nlocal " + c.localAddress() + " remote " + c.remoteAddress() + "\n"),
            "endpoints local " + c.localAddress() + " remote " + c.remoteAddress());
        check(missing, Pattern.compile("\nstate [A-Z]+ failure " + c.failure() + ": ").matcher(s).find(), "state and failure");
        // before the handshake picks a scheme the line says which one this side asks for
        check(missing, Pattern.compile("\nflow scheme=(\\w+|\\(asking for \\w+\\)) credits=-?\\d+ ").matcher(s).find(), "credits");
        check(missing, Pattern.compile("\nmseq next=\\d+ lastReceived=-?\\d+\n").matcher(s).find(), "sequence numbers");
        // SoftRdma goes on with its own view of the queue pair; a device with none ends the line there
        check(missing, Pattern.compile("\nqueue pair \\d+ [A-Z_]+(: sq post=\\d+ [^\n]*)?\n").matcher(s).find(),
            "queue pair number and state");
        check(missing, Pattern.compile("\nevents pending=(true|false) armed=(true|false)").matcher(s).find(),
            "the engine's event and arm");
        check(missing, Pattern.compile("\nreceive buffers=\\d+x\\d+ posted=\\d+ unreadMessages=\\d+ unreadBytes=\\d+ "
            + "brokenMarkers=\\d+\n").matcher(s).find(), "receive buffer occupancy and markers");
        check(missing, Pattern.compile("\nsend slots=\\d+ goal=\\d+ posted=\\d+ completed=\\d+ open=\\d+\\+\\d+ "
            + "control posted=\\d+ completed=\\d+\n").matcher(s).find(), "send slot occupancy");
        check(missing, s.contains("\ncounters bytesSent="), "counters");
        String ownStateChange = "sdp L2 conn.state d1=0x" + Long.toHexString(c.id()) + " ";
        check(missing, r.history().stream().anyMatch(h -> h.contains(ownStateChange)),
            "the flight recorder's history with this connection's state changes (" + ownStateChange + ")");
        if (!missing.isEmpty()) {
            throw new AssertionError("FFDC record lacks " + missing + ":\n" + r.render());
        }
    }

    private static void check(List<String> missing, boolean ok, String what) {
        if (!ok) {
            missing.add(what);
        }
    }
}
