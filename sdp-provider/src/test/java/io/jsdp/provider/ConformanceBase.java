package io.jsdp.provider;

import io.jsdp.SdpSelectorProvider;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;

/**
 * What the one-JVM conformance classes share: the two kinds each case runs over — the JDK's own
 * provider first (the baseline), then jsdp's — and the closing of everything a case opened.
 */
abstract class ConformanceBase {
    /** The JDK's provider: the baseline. */
    static final SelectorProvider JDK = SelectorProvider.provider();
    /** jsdp's provider. */
    static final SelectorProvider JSDP = new SdpSelectorProvider();
    private final List<AutoCloseable> open = new ArrayList<>();

    /** The kinds, baseline first; the cases' {@code @MethodSource}. */
    static Stream<String> kinds() {
        return Stream.of("jdk", "jsdp");
    }

    /** The provider of a kind. */
    static SelectorProvider provider(String kind) {
        return kind.equals("jdk") ? JDK : JSDP;
    }

    /** Closes {@code c} after the case. */
    <T extends AutoCloseable> T track(T c) {
        open.add(c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        open.clear();
        Thread.interrupted();
    }
}
