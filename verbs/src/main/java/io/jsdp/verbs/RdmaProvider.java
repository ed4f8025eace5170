package io.jsdp.verbs;

/**
 * A source of RDMA devices, found with {@link java.util.ServiceLoader} (declare implementations in
 * {@code META-INF/services/io.jsdp.verbs.RdmaProvider}). {@link RdmaDevices} picks one by
 * {@code jsdp.device}.
 */
public interface RdmaProvider {

    /**
     * The provider's name, the value {@code jsdp.device} selects it by (e.g. {@code "soft"}).
     *
     * @return a short lowercase name
     */
    String name();

    /**
     * The preference in {@code jsdp.device=auto}: the available provider with the highest priority wins.
     * Hardware providers rank above software ones.
     *
     * @return the priority
     */
    int priority();

    /**
     * Whether the provider can open a device here, and if not, why. Must be cheap and must not throw.
     *
     * @return the availability with its reason
     */
    Availability availability();

    /**
     * Opens the provider's device.
     *
     * @return the device
     * @throws VerbsException when it cannot be opened; the message says what to do about it
     */
    RdmaDevice open() throws VerbsException;

    /**
     * Whether a provider can be used, with the reason either way.
     *
     * @param available true when {@link #open()} is expected to work
     * @param reason one line, e.g. "libdisni not found on java.library.path"
     */
    record Availability(boolean available, String reason) {
        /**
         * An available provider.
         *
         * @param reason why, e.g. "pure Java, always available"
         * @return the availability
         */
        public static Availability yes(String reason) {
            return new Availability(true, reason);
        }

        /**
         * An unavailable provider.
         *
         * @param reason why not, and how to fix it
         * @return the availability
         */
        public static Availability no(String reason) {
            return new Availability(false, reason);
        }
    }
}
