package io.jsdp.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.ras.Trace;
import io.jsdp.ras.TraceRecord;
import io.jsdp.testbed.SoftDevice;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.RdmaDevices;
import io.jsdp.verbs.RdmaProvider;
import io.jsdp.verbs.VerbsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code jsdp.device} with the DiSNI provider on the class path of a machine without libdisni (issue 4,
 * acceptance 3): {@code disni} fails at once saying how to get libdisni; {@code auto} opens SoftRdma and says
 * why in its one start-up line.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DisniDeviceSelectionTest {

    @Test
    void serviceLoaderFindsTheDisniProviderRankedAboveSoftRdma() {
        List<RdmaProvider> providers = RdmaDevices.providers();
        assertEquals(DisniRdmaProvider.NAME, providers.get(0).name(), providers.toString());
        assertInstanceOf(DisniRdmaProvider.class, providers.get(0));
        assertTrue(providers.stream().anyMatch(p -> p.name().equals("soft")), providers.toString());
    }

    @Test
    void disniWithoutLibdisniFailsAtOnceSayingHowToGetIt() {
        assertFalse(new DisniRdmaProvider().availability().available(), "this machine has no libdisni");
        long t0 = System.nanoTime();
        VerbsException e = assertThrows(VerbsException.class, () -> RdmaDevices.open("disni"));
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(2), "fails fast");
        assertEquals(Errno.ENOENT, e.errno());
        String m = e.getMessage();
        assertTrue(m.contains("jsdp.device=disni"), m);
        assertTrue(m.contains("libdisni (libdisni.so) not found on java.library.path"), m);
        assertTrue(m.contains("build libdisni 2.1 from DiSNI's sources"), m);
        assertTrue(m.contains("-Djava.library.path="), m);
        assertTrue(m.contains("docs/hardware.md"), m);
    }

    @Test
    void autoOpensSoftRdmaAndSaysWhyInOneLine() throws Exception {
        Trace.flightRecorder().clear();
        RdmaDevices.Selection s = RdmaDevices.select("auto", RdmaDevices.providers());
        assertEquals("soft", s.provider().name());
        assertTrue(s.reason().startsWith("auto: soft ("), s.reason());
        assertTrue(s.reason().contains("disni not available: libdisni (libdisni.so) not found"), s.reason());
        try (RdmaDevice d = RdmaDevices.open("auto")) {
            assertInstanceOf(SoftDevice.class, d);
        }
        List<TraceRecord> lines = Trace.flightRecorder().snapshot("device");
        assertTrue(lines.stream().anyMatch(r -> r.toString().contains("device.selected")),
            "the start-up line is recorded at level 2: " + lines);
    }

    @Test
    void libdisniIsFoundOnTheLibraryPathWithoutLoadingIt(@TempDir Path dir) throws Exception {
        assertEquals(null, DisniRdmaProvider.findLibrary(dir.toString()));
        Path lib = Files.createFile(dir.resolve(System.mapLibraryName("disni")));
        assertEquals(lib, DisniRdmaProvider.findLibrary("/nonexistent" + java.io.File.pathSeparator + dir));
    }
}
