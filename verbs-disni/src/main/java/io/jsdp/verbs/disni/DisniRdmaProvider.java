package io.jsdp.verbs.disni;

import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.RdmaProvider;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.Errno;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The DiSNI provider ({@code jsdp.device=disni}): RDMA hardware through libdisni. Available when libdisni is
 * on {@code java.library.path}, sysfs lists an RDMA device and {@code java.base} exports {@code sun.nio.ch}
 * to DiSNI (it takes buffer addresses through {@code sun.nio.ch.DirectBuffer}); {@code auto} prefers it to
 * SoftRdma. None of the checks loads native code.
 */
public final class DisniRdmaProvider implements RdmaProvider {
    /** The provider name. */
    public static final String NAME = "disni";
    /** The priority in {@code auto}: above SoftRdma (0). */
    public static final int PRIORITY = 100;
    /** How to get what is missing; see docs/hardware.md. */
    static final String HOW_TO = "build libdisni 2.1 from DiSNI's sources (zrlio/disni, tag v2.1, directory libdisni: "
        + "./autoprepare.sh && ./configure --with-jdk=$JAVA_HOME && make install, needs the libibverbs and "
        + "librdmacm development packages) and put its directory on java.library.path "
        + "(-Djava.library.path=/usr/local/lib); see docs/hardware.md";

    /** Creates the provider (for {@link java.util.ServiceLoader}). */
    public DisniRdmaProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public Availability availability() {
        String libraryPath = System.getProperty("java.library.path", "");
        Path lib = findLibrary(libraryPath);
        if (lib == null) {
            return Availability.no("libdisni (" + System.mapLibraryName("disni") + ") not found on java.library.path ("
                + libraryPath + "); " + HOW_TO);
        }
        List<String> devices = DisniDevice.rdmaDevices();
        if (devices.isEmpty()) {
            return Availability.no("libdisni found at " + lib + " but no RDMA device in /sys/class/infiniband "
                + "(load the adapter's driver, or rdma_rxe/siw for a software device)");
        }
        Module disni = com.ibm.disni.verbs.RdmaProvider.class.getModule();
        if (!Object.class.getModule().isExported("sun.nio.ch", disni)) {
            return Availability.no("libdisni and RDMA device(s) " + devices + " found, but java.base does not export "
                + "sun.nio.ch to DiSNI, which registers buffers through it: add --add-exports java.base/sun.nio.ch="
                + (disni.isNamed() ? disni.getName() : "ALL-UNNAMED") + " (see docs/hardware.md)");
        }
        return Availability.yes("libdisni at " + lib + ", RDMA device(s) " + devices);
    }

    @Override
    public RdmaDevice open() throws VerbsException {
        Availability a = availability();
        if (!a.available()) {
            throw new VerbsException(Errno.ENOENT, "DiSNI cannot be used: " + a.reason());
        }
        return DisniDevice.open(DisniDevice.Settings.fromProperties());
    }

    /** libdisni in one of the directories of {@code path}, or null. */
    static Path findLibrary(String path) {
        String file = System.mapLibraryName("disni");
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, file);
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }
}
