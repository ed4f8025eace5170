package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaProvider;
import com.ibm.disni.verbs.RdmaVerbs;
import io.jsdp.testbed.SoftDevice;
import java.io.IOException;

/**
 * The DiSNI provider of the shim: DiSNI's {@code RdmaVerbs} and {@code RdmaCm} over one SoftRdma device,
 * the shim's "HCA". Every DiSNI user of the JVM shares it, as every user of a host shares its adapter.
 */
public final class SoftDisniProvider extends RdmaProvider {
    /** The JNI version libdisni 2.1 reports. */
    static final int VERSION = 32;

    private final SoftDevice device;
    private final ShimVerbs verbs = new ShimVerbs();
    private final ShimCm cm = new ShimCm(this);
    /** Created on first use, once this provider is installed (its constructor asks DiSNI for the provider). */
    private ShimContext context;

    SoftDisniProvider(SoftDevice device) {
        this.device = device;
    }

    /**
     * The SoftRdma device under the shim: for fault injection, device memory and leak checks in tests.
     *
     * @return the device
     */
    public SoftDevice device() {
        return device;
    }

    synchronized ShimContext context() throws IOException {
        if (context == null) {
            context = new ShimContext(device);
        }
        return context;
    }

    @Override
    public RdmaCm openCm() {
        return cm;
    }

    @Override
    public RdmaVerbs openVerbs() {
        return verbs;
    }

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public String toString() {
        return "SoftRdma DiSNI shim over " + device.name();
    }
}
