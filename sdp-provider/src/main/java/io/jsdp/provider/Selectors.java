package io.jsdp.provider;

import java.io.IOException;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;

/** Opens the provider's hybrid selector (the selector class stays package-private). */
public final class Selectors {
    private Selectors() {
    }

    /**
     * Opens a selector for {@code provider}'s channels and the JDK's.
     *
     * @param provider the provider the selector belongs to
     * @param jdk the JDK's provider, whose selector watches the JDK's channels
     * @return the selector
     * @throws IOException when the JDK's selector cannot be opened
     */
    public static AbstractSelector open(SelectorProvider provider, SelectorProvider jdk) throws IOException {
        return new HybridSelector(provider, jdk.openSelector());
    }
}
