package io.jsdp.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How {@code jsdp.device} picks a provider, with fake providers (no ServiceLoader, no device opened). */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RdmaDevicesTest {
    private static final String NO_LIBDISNI = "libdisni not found on java.library.path";

    /** A provider that only answers questions; opening it is a test failure. */
    private record Fake(String name, int priority, RdmaProvider.Availability availability) implements RdmaProvider {
        @Override
        public RdmaDevice open() {
            throw new AssertionError("select() must not open " + name);
        }
    }

    private static final RdmaProvider DISNI_UNAVAILABLE = new Fake("disni", 100, RdmaProvider.Availability.no(NO_LIBDISNI));
    private static final RdmaProvider DISNI_AVAILABLE = new Fake("disni", 100, RdmaProvider.Availability.yes("mlx5_0 found"));
    private static final RdmaProvider SOFT = new Fake("soft", 0, RdmaProvider.Availability.yes("pure Java"));

    @Test
    void autoPassesOverAnUnavailableHigherPriorityProviderAndSaysWhy() throws Exception {
        RdmaDevices.Selection s = RdmaDevices.select("auto", List.of(DISNI_UNAVAILABLE, SOFT));
        assertSame(SOFT, s.provider());
        assertTrue(s.reason().contains("soft"), s.reason());
        assertTrue(s.reason().contains("disni not available: " + NO_LIBDISNI), s.reason());
    }

    @Test
    void autoTakesTheAvailableProviderOfHighestPriority() throws Exception {
        RdmaDevices.Selection s = RdmaDevices.select("auto", List.of(DISNI_AVAILABLE, SOFT));
        assertSame(DISNI_AVAILABLE, s.provider());
        assertTrue(s.reason().contains("mlx5_0 found"), s.reason());
    }

    @Test
    void blankOrNullChoiceMeansAuto() throws Exception {
        assertSame(SOFT, RdmaDevices.select(null, List.of(DISNI_UNAVAILABLE, SOFT)).provider());
        assertSame(SOFT, RdmaDevices.select("  ", List.of(DISNI_UNAVAILABLE, SOFT)).provider());
        assertSame(SOFT, RdmaDevices.select(" AUTO ", List.of(DISNI_UNAVAILABLE, SOFT)).provider());
    }

    @Test
    void namedProviderIsTakenEvenWhenAnotherRanksHigher() throws Exception {
        RdmaDevices.Selection s = RdmaDevices.select("soft", List.of(DISNI_AVAILABLE, SOFT));
        assertSame(SOFT, s.provider());
        assertTrue(s.reason().startsWith(RdmaDevices.DEVICE_PROP + "=soft"), s.reason());
        assertSame(SOFT, RdmaDevices.select("Soft", List.of(DISNI_AVAILABLE, SOFT)).provider(), "names ignore case");
    }

    @Test
    void namedButUnavailableProviderFailsWithItsReason() {
        VerbsException e = assertThrows(VerbsException.class,
            () -> RdmaDevices.select("disni", List.of(DISNI_UNAVAILABLE, SOFT)));
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().contains(RdmaDevices.DEVICE_PROP + "=disni"), e.getMessage());
        assertTrue(e.getMessage().contains(NO_LIBDISNI), e.getMessage());
    }

    @Test
    void unknownNameFailsListingTheKnownProviders() {
        VerbsException e = assertThrows(VerbsException.class,
            () -> RdmaDevices.select("mlx", List.of(DISNI_UNAVAILABLE, SOFT)));
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().contains(RdmaDevices.DEVICE_PROP + "=mlx"), e.getMessage());
        assertTrue(e.getMessage().contains("[disni, soft]"), e.getMessage());
    }

    @Test
    void autoWithNothingAvailableFailsNamingEveryReason() {
        VerbsException none = assertThrows(VerbsException.class, () -> RdmaDevices.select("auto", List.of()));
        assertTrue(none.getMessage().contains("no provider on the class path"), none.getMessage());
        VerbsException unavailable = assertThrows(VerbsException.class,
            () -> RdmaDevices.select("auto", List.of(DISNI_UNAVAILABLE)));
        assertTrue(unavailable.getMessage().contains(NO_LIBDISNI), unavailable.getMessage());
    }
}
