package io.jsdp.verbs;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceComponent;
import io.jsdp.ras.TraceLevel;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.ServiceLoader;

/**
 * Device discovery and choice. Providers are found with {@link ServiceLoader}; {@code jsdp.device}
 * chooses: {@code auto} (the default) takes the available provider of highest priority (hardware
 * before SoftRdma), a provider name takes that provider or fails saying why it cannot be used.
 */
public final class RdmaDevices {
    /** System property choosing the device: {@code auto}, or a provider name such as {@code soft} or {@code disni}. */
    public static final String DEVICE_PROP = "jsdp.device";
    /** Default of {@link #DEVICE_PROP}. */
    public static final String DEVICE_DEFAULT = "auto";

    private static final TraceComponent TRACE = Trace.component("device");

    private RdmaDevices() {
    }

    /**
     * The providers on the class path, highest priority first.
     *
     * @return the providers
     */
    public static List<RdmaProvider> providers() {
        List<RdmaProvider> list = new ArrayList<>();
        for (RdmaProvider p : ServiceLoader.load(RdmaProvider.class, RdmaDevices.class.getClassLoader())) {
            list.add(p);
        }
        list.sort(Comparator.comparingInt(RdmaProvider::priority).reversed().thenComparing(RdmaProvider::name));
        return list;
    }

    /**
     * The outcome of a choice: which provider, and the one-line reason.
     *
     * @param provider the chosen provider
     * @param reason why it was chosen, naming the providers passed over and why
     */
    public record Selection(RdmaProvider provider, String reason) {
    }

    /**
     * Chooses a provider as {@code jsdp.device} says.
     *
     * @param choice {@code auto} or a provider name (case-insensitive)
     * @param candidates the providers to choose from, highest priority first
     * @return the selection
     * @throws VerbsException when the named provider is missing or unavailable, or none is available
     */
    public static Selection select(String choice, List<RdmaProvider> candidates) throws VerbsException {
        String wanted = choice == null ? DEVICE_DEFAULT : choice.trim().toLowerCase(Locale.ROOT);
        if (wanted.isEmpty()) {
            wanted = DEVICE_DEFAULT;
        }
        if (!DEVICE_DEFAULT.equals(wanted)) {
            for (RdmaProvider p : candidates) {
                if (p.name().equals(wanted)) {
                    RdmaProvider.Availability a = p.availability();
                    if (!a.available()) {
                        throw new VerbsException(Errno.ENOENT,
                            DEVICE_PROP + "=" + wanted + " but that device cannot be used: " + a.reason());
                    }
                    return new Selection(p, DEVICE_PROP + "=" + wanted + ": " + a.reason());
                }
            }
            throw new VerbsException(Errno.ENOENT, DEVICE_PROP + "=" + wanted + " names no provider; known: "
                + names(candidates) + " (or auto)");
        }
        StringBuilder passedOver = new StringBuilder();
        for (RdmaProvider p : candidates) {
            RdmaProvider.Availability a = p.availability();
            if (a.available()) {
                String reason = "auto: " + p.name() + " (" + a.reason() + ")";
                if (passedOver.length() > 0) {
                    reason += "; " + passedOver;
                }
                return new Selection(p, reason);
            }
            if (passedOver.length() > 0) {
                passedOver.append("; ");
            }
            passedOver.append(p.name()).append(" not available: ").append(a.reason());
        }
        throw new VerbsException(Errno.ENOENT, DEVICE_PROP + "=auto found no usable RDMA device"
            + (passedOver.length() > 0 ? ": " + passedOver : " (no provider on the class path)"));
    }

    /**
     * Opens the device {@code jsdp.device} chooses and says which and why in one line (trace level 2,
     * component {@code device}).
     *
     * @return the opened device
     * @throws VerbsException when no device can be opened
     */
    public static RdmaDevice open() throws VerbsException {
        return open(System.getProperty(DEVICE_PROP, DEVICE_DEFAULT));
    }

    /**
     * Opens the device that {@code choice} selects.
     *
     * @param choice {@code auto} or a provider name
     * @return the opened device
     * @throws VerbsException when no device can be opened
     */
    public static RdmaDevice open(String choice) throws VerbsException {
        Selection s = select(choice, providers());
        RdmaDevice device = s.provider().open();
        if (TRACE.on(TraceLevel.RARE)) {
            TRACE.message(TraceLevel.RARE, "device.selected",
                "jsdp device " + device.name() + " (" + s.provider().name() + "): " + s.reason());
        }
        return device;
    }

    private static String names(List<RdmaProvider> candidates) {
        List<String> n = new ArrayList<>();
        for (RdmaProvider p : candidates) {
            n.add(p.name());
        }
        return n.toString();
    }
}
