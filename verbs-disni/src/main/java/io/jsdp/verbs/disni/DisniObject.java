package io.jsdp.verbs.disni;

/** An object of a {@link DisniDevice} that the device closes when the application did not. */
interface DisniObject {
    /** Closing order when the device closes: lower first (ids, queue pairs, regions, queues, channels, domains). */
    int closeOrder();

    /** Closes without throwing, whatever depends on it. */
    void forceClose();
}
