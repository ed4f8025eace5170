package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.RdmaProvider;
import io.jsdp.ras.ResourceTracker;
import io.jsdp.testbed.SoftDevice;
import java.io.IOException;
import java.lang.reflect.Field;

/**
 * Installs the shim into DiSNI: DiSNI's {@code RdmaProvider.provider()} hard-codes the native provider, so
 * the shim is written into its private static field by reflection, under the class's monitor (the method is
 * {@code static synchronized} and the field is not volatile). Works without JVM flags on JDK 17 and 25:
 * DiSNI's jar is open, on the class path and as an automatic module. Install before anything touches DiSNI:
 * every DiSNI handle's constructor asks for the provider. One JVM has one DiSNI provider.
 */
public final class SoftDisni {
    private static SoftDisniProvider installed;

    private SoftDisni() {
    }

    /**
     * Installs the shim, over a new SoftRdma device (on the fabric {@code jsdp.soft.fabric} names, leak
     * detection {@code all}), unless it is installed already. Idempotent.
     *
     * @return the installed provider
     * @throws IllegalStateException when another DiSNI provider (libdisni) is in use already
     */
    public static synchronized SoftDisniProvider install() {
        if (installed != null) {
            return installed;
        }
        SoftDevice device = SoftDevice.open(ResourceTracker.Level.ALL);
        SoftDisniProvider provider = new SoftDisniProvider(device);
        try {
            Field field = RdmaProvider.class.getDeclaredField("provider");
            field.setAccessible(true);
            synchronized (RdmaProvider.class) {
                Object current = field.get(null);
                if (current != null) {
                    device.close();
                    throw new IllegalStateException("DiSNI already uses provider " + current + "; install the shim "
                        + "before anything touches DiSNI");
                }
                field.set(null, provider);
            }
            if (RdmaProvider.provider() != provider) {
                throw new IllegalStateException("DiSNI did not take the shim");
            }
        } catch (ReflectiveOperationException | IOException e) {
            device.close();
            throw new IllegalStateException("cannot install the DiSNI shim", e);
        }
        installed = provider;
        return provider;
    }

    /**
     * The installed shim.
     *
     * @return the provider, or null before {@link #install()}
     */
    public static synchronized SoftDisniProvider installed() {
        return installed;
    }
}
