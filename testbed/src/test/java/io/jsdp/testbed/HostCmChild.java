package io.jsdp.testbed;

import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.shm.Rendezvous;
import io.jsdp.verbs.CmEvent;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmEventType;
import io.jsdp.verbs.CmId;
import io.jsdp.verbs.CompletionQueue;
import io.jsdp.verbs.ConnectionParameters;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.QueuePairAttributes;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * The peer process of the host connection-manager tests: {@code HostCmChild <dir> [parentPort]}. On
 * a host-fabric device of rendezvous directory {@code dir} it opens
 * <ul>
 *   <li>a listener that accepts every request with private data {7, 7, 7} and disconnects when its
 *       peer does;</li>
 *   <li>a listener that never answers;</li>
 *   <li>an id bound to a port without listening;</li>
 * </ul>
 * prints {@code READY <node-token> <accepting-port> <silent-port> <bound-port>}, connects to
 * {@code parentPort} on loopback when given, and then reports every event on one line:
 * {@code <TYPE> <status> <private-data-hex>} for the passive side, {@code ACTIVE <TYPE> <status>
 * <private-data-hex>} for its own connect. It runs until killed.
 */
public final class HostCmChild {
    private HostCmChild() {
    }

    /**
     * Runs the child.
     *
     * @param args the rendezvous directory, and optionally the parent's listening port
     * @throws Exception on any failure (the test sees the stack trace in the output)
     */
    public static void main(String[] args) throws Exception {
        System.setProperty(Rendezvous.DIR_PROP, args[0]);
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.OFF, SoftDevice.Fabric.HOST);
        ProtectionDomain pd = device.allocateProtectionDomain();
        CompletionQueue cq = device.createCompletionQueue(null, 64);
        QueuePairAttributes attrs = new QueuePairAttributes().sendCq(cq).recvCq(cq);
        CmEventChannel events = device.createEventChannel();
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        CmId accepting = device.createId(events);
        accepting.bind(any);
        accepting.listen(8);
        CmId silent = device.createId(events);
        silent.bind(any);
        silent.listen(8);
        CmId bound = device.createId(events);
        bound.bind(any);
        System.out.println("READY " + device.host().node().id().token() + " " + accepting.localAddress().getPort() + " "
            + silent.localAddress().getPort() + " " + bound.localAddress().getPort());

        CmId active = null;
        if (args.length > 1) {
            active = device.createId(events);
            active.resolveAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1])), 1000);
        }
        HexFormat hex = HexFormat.of();
        for (;;) {
            CmEvent e = events.poll(TimeUnit.SECONDS.toNanos(1));
            if (e == null) {
                continue;
            }
            String data = e.privateData() == null ? "" : hex.formatHex(e.privateData());
            if (e.id() == active) {
                System.out.println("ACTIVE " + e.type() + " " + e.status() + " " + data);
                if (e.type() == CmEventType.ADDR_RESOLVED) {
                    active.resolveRoute(1000);
                } else if (e.type() == CmEventType.ROUTE_RESOLVED) {
                    active.createQueuePair(pd, attrs);
                    active.connect(new ConnectionParameters().connectTimeoutMs(60_000).privateData(new byte[] {5}));
                }
                continue;
            }
            System.out.println(e.type() + " " + e.status() + " " + data);
            if (e.type() == CmEventType.CONNECT_REQUEST && e.listenId() == accepting) {
                e.id().createQueuePair(pd, attrs);
                e.id().accept(new ConnectionParameters().privateData(new byte[] {7, 7, 7}));
            } else if (e.type() == CmEventType.DISCONNECTED) {
                e.id().disconnect();
                System.out.println("QP " + e.id().queuePair().state());
            }
        }
    }
}
