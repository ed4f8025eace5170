package io.jsdp.flow.engine;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Test fixture: two SoftRdma devices in this JVM, an SDP stack on each, a listener on B and one
 * connection from A. Closing it closes the stacks and devices and fails when a device reports leaks.
 */
public final class SdpPair implements AutoCloseable {
    /** The devices. */
    public final SoftDevice deviceA;
    /** The devices. */
    public final SoftDevice deviceB;
    /** The stacks. */
    public final SdpStack stackA;
    /** The stacks. */
    public final SdpStack stackB;
    /** B's listener. */
    public final SdpListener listener;
    /** A's end (active). */
    public SdpConnection a;
    /** B's end (passive). */
    public SdpConnection b;

    private SdpPair(SdpOptions optionsA, SdpOptions optionsB) throws Exception {
        deviceA = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        deviceB = SoftDevice.open(ResourceTracker.Level.ALL, SoftDevice.Fabric.HOST);
        stackA = SdpStack.open(deviceA);
        stackB = SdpStack.open(deviceB);
        listener = stackB.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16, optionsB);
        if (optionsA != null) {
            connect(optionsA);
        }
    }

    /**
     * Opens the pair and connects.
     *
     * @param optionsA A's settings
     * @param optionsB B's settings (the listener's)
     * @return the connected pair
     * @throws Exception when anything fails
     */
    public static SdpPair open(SdpOptions optionsA, SdpOptions optionsB) throws Exception {
        return new SdpPair(optionsA, optionsB);
    }

    /**
     * Opens the pair with default settings, both ends asking for {@code scheme}, connects and checks
     * that both use it.
     *
     * @param scheme the flow-control scheme
     * @return the connected pair
     * @throws Exception when anything fails
     */
    public static SdpPair open(FlowControlScheme scheme) throws Exception {
        SdpPair p = open(new SdpOptions().flowControl(scheme), new SdpOptions().flowControl(scheme));
        if (p.a.flowControlScheme() != scheme || p.b.flowControlScheme() != scheme) {
            p.close();
            throw new AssertionError("asked both ends for " + scheme + ", got " + p.a.flowControlScheme() + " and "
                + p.b.flowControlScheme());
        }
        return p;
    }

    /**
     * Opens the pair with default settings and connects.
     *
     * @return the connected pair
     * @throws Exception when anything fails
     */
    public static SdpPair open() throws Exception {
        return open(new SdpOptions(), new SdpOptions());
    }

    /**
     * Opens the devices, stacks and listener without connecting.
     *
     * @param optionsB the listener's settings
     * @return the pair, {@link #a} and {@link #b} null
     * @throws Exception when anything fails
     */
    public static SdpPair listening(SdpOptions optionsB) throws Exception {
        return new SdpPair(null, optionsB);
    }

    /**
     * Connects A to B's listener and accepts.
     *
     * @param optionsA A's settings
     * @throws Exception when the connection cannot be made
     */
    public void connect(SdpOptions optionsA) throws Exception {
        a = stackA.connect(listener.localAddress(), optionsA);
        if (!a.awaitConnected(TimeUnit.SECONDS.toNanos(10))) {
            throw new AssertionError("connect failed: " + a.failureDetail() + "\n" + a.snapshot());
        }
        b = listener.accept(TimeUnit.SECONDS.toNanos(10));
        if (b == null) {
            throw new AssertionError("nothing accepted");
        }
    }

    /**
     * Closes everything; fails when a device still had open resources.
     *
     * @throws VerbsException never in practice
     */
    @Override
    public void close() throws VerbsException {
        listener.close();
        stackA.close();
        stackB.close();
        String leaksA = deviceA.resources().checkLeaks();
        String leaksB = deviceB.resources().checkLeaks();
        deviceA.close();
        deviceB.close();
        if (leaksA != null && !leaksA.isEmpty() || leaksB != null && !leaksB.isEmpty()) {
            throw new AssertionError("leaks: " + leaksA + " " + leaksB);
        }
    }
}
