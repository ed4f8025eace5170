package io.jsdp.testbed;

import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.RdmaProvider;

/** The SoftRdma provider ({@code jsdp.device=soft}): pure Java, always available, lowest priority. */
public final class SoftRdmaProvider implements RdmaProvider {
    /** The provider name. */
    public static final String NAME = "soft";

    /** Creates the provider (for {@link java.util.ServiceLoader}). */
    public SoftRdmaProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public Availability availability() {
        return Availability.yes("SoftRdma, the pure-Java software device, always available");
    }

    @Override
    public RdmaDevice open() {
        return SoftDevice.open();
    }
}
