package io.jsdp.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.RdmaDevices;
import io.jsdp.verbs.RdmaProvider;
import io.jsdp.verbs.VerbsException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code jsdp.device} on a class path where SoftRdma is the only provider (found through ServiceLoader). */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DeviceSelectionTest {

    @Test
    void serviceLoaderFindsTheSoftProvider() {
        List<RdmaProvider> providers = RdmaDevices.providers();
        RdmaProvider soft = providers.stream().filter(p -> p.name().equals(SoftRdmaProvider.NAME)).findFirst()
            .orElseThrow(() -> new AssertionError("no soft provider among " + providers));
        assertInstanceOf(SoftRdmaProvider.class, soft);
        assertTrue(soft.availability().available());
        // what makes auto choose it here: nothing of higher priority can be used on this machine
        for (RdmaProvider p : providers) {
            if (p.priority() > soft.priority()) {
                assertFalse(p.availability().available(), p.name() + " would win auto: " + p.availability());
            }
        }
    }

    @Test
    void autoOpensTheSoftDevice() throws Exception {
        try (RdmaDevice d = RdmaDevices.open("auto")) {
            assertInstanceOf(SoftDevice.class, d);
            assertEquals(SoftRdmaProvider.NAME, d.provider());
            assertTrue(d.isOpen());
        }
    }

    @Test
    void softByNameOpensTheSoftDevice() throws Exception {
        try (RdmaDevice d = RdmaDevices.open("soft")) {
            assertInstanceOf(SoftDevice.class, d);
        }
    }

    @Test
    void systemPropertyChoosesTheDevice() throws Exception {
        String saved = System.getProperty(RdmaDevices.DEVICE_PROP);
        System.setProperty(RdmaDevices.DEVICE_PROP, "soft");
        try (RdmaDevice d = RdmaDevices.open()) {
            assertInstanceOf(SoftDevice.class, d);
            System.setProperty(RdmaDevices.DEVICE_PROP, "disni");
            assertThrows(VerbsException.class, RdmaDevices::open);
        } finally {
            if (saved == null) {
                System.clearProperty(RdmaDevices.DEVICE_PROP);
            } else {
                System.setProperty(RdmaDevices.DEVICE_PROP, saved);
            }
        }
    }

    @Test
    void disniWithoutItsProviderFailsNamingThePropertyAndTheKnownProviders() {
        VerbsException e = assertThrows(VerbsException.class, () -> RdmaDevices.open("disni"));
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().contains(RdmaDevices.DEVICE_PROP), e.getMessage());
        assertTrue(e.getMessage().matches("(?s).*known: \\[([a-z0-9]+, )*soft(, [a-z0-9]+)*\\].*"),
            "lists the known providers: " + e.getMessage());
    }
}
