package io.jsdp.zcopy;

import io.jsdp.flow.engine.SdpOptions;
import io.jsdp.flow.engine.SdpPair;
import io.jsdp.verbs.VerbsException;

/**
 * Two SoftRdma devices of this JVM (host fabric), an SDP stack with zero copy on each, one connection
 * from A to B. Closing checks that no registration is left: the caches are empty once the stacks
 * closed and the devices report no open resource (the resource tracker, level ALL).
 */
final class ZcopyPair implements AutoCloseable {
    final SdpPair pair;
    final ZeroCopy zcA;
    final ZeroCopy zcB;

    private ZcopyPair(SdpPair pair, ZeroCopy zcA, ZeroCopy zcB) {
        this.pair = pair;
        this.zcA = zcA;
        this.zcB = zcB;
    }

    static ZcopyPair open(SdpOptions options, ZeroCopySettings settingsA, ZeroCopySettings settingsB, boolean zcopyOnB)
        throws Exception {
        return open(options, settingsA, settingsB, zcopyOnB, true, true);
    }

    /** As above; {@code sinkAvailOnA}/{@code sinkAvailOnB}: whether each side offers SinkAvail. */
    static ZcopyPair open(SdpOptions options, ZeroCopySettings settingsA, ZeroCopySettings settingsB, boolean zcopyOnB,
                          boolean sinkAvailOnA, boolean sinkAvailOnB) throws Exception {
        SdpPair p = SdpPair.listening(options.copy());
        try {
            ZeroCopy a = ZeroCopy.install(p.stackA, settingsA).sinkAvail(sinkAvailOnA);
            ZeroCopy b = zcopyOnB ? ZeroCopy.install(p.stackB, settingsB).sinkAvail(sinkAvailOnB) : null;
            p.connect(options.copy());
            return new ZcopyPair(p, a, b);
        } catch (Exception | AssertionError e) {
            p.close();
            throw e;
        }
    }

    static ZcopyPair open(SdpOptions options, ZeroCopySettings settings) throws Exception {
        return open(options, settings, settings, true);
    }

    @Override
    public void close() throws VerbsException {
        pair.close(); // fails on any resource a device still holds: registrations included
        if (zcA.registrations() != 0 || zcB != null && zcB.registrations() != 0) {
            throw new AssertionError("registrations left after close: " + zcA.describe() + " / "
                + (zcB == null ? "-" : zcB.describe()));
        }
    }
}
