package io.jsdp.ras;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link Trace}: the registry, {@code jsdp.trace} parsing and run-time reconfiguration. */
@Timeout(10)
class TraceConfigurationTest {
    @AfterEach
    void restoreDefault() {
        Trace.configure(Trace.TRACE_DEFAULT);
    }

    @Test
    void shouldReturnSameComponentForSameName() {
        assertSame(Trace.component("cfg.same"), Trace.component("cfg.same"));
        assertEquals("cfg.same", Trace.component("cfg.same").name());
    }

    @Test
    void shouldCreateOneComponentWhenManyThreadsAskAtOnce() throws Exception {
        final ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            final List<Future<TraceComponent>> futures = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                futures.add(pool.submit(() -> Trace.component("cfg.race")));
            }
            final TraceComponent first = futures.get(0).get();
            for (Future<TraceComponent> future : futures) {
                assertSame(first, future.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "CM", "a b", "*", "cm:5", "qp/1"})
    void shouldRejectBadComponentName(String name) {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Trace.component(name));
        assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
    }

    @Test
    void shouldApplyExplicitEntriesAndDefaultToExistingAndFutureComponents() {
        final TraceComponent cm = Trace.component("cfg.cm");
        final TraceComponent device = Trace.component("cfg.device");

        Trace.configure("*:4,cfg.cm:9");

        assertEquals(9, cm.level());
        assertEquals(4, device.level());
        assertEquals(4, Trace.component("cfg.future1").level());
        assertEquals("*:4,cfg.cm:9", Trace.describe());
    }

    @Test
    void shouldTolerateWhitespaceAroundEntriesNamesAndLevels() {
        final TraceComponent cm = Trace.component("cfg.ws");

        Trace.configure("  cfg.ws : 5 ,\t* :3 ");

        assertEquals(5, cm.level());
        assertEquals(3, Trace.component("cfg.ws.other").level());
        assertEquals("*:3,cfg.ws:5", Trace.describe());
    }

    @Test
    void shouldKeepDefaultLevelTwoForComponentsNotNamedWhenSpecHasNoDefault() {
        final TraceComponent other = Trace.component("cfg.notnamed");
        Trace.configure("*:7");
        assertEquals(7, other.level());

        Trace.configure("cfg.named:5");

        assertEquals(2, other.level());
        assertEquals(5, Trace.component("cfg.named").level());
        assertEquals(2, Trace.component("cfg.future2").level());
        assertEquals("*:2,cfg.named:5", Trace.describe());
    }

    @Test
    void shouldTreatBlankSpecAsAllDefaults() {
        final TraceComponent component = Trace.component("cfg.blank");
        Trace.configure("*:9");

        Trace.configure("   ");

        assertEquals(2, component.level());
        assertEquals("*:2", Trace.describe());
    }

    @Test
    void shouldMakeRuntimeLevelChangesVisibleThroughOn() {
        final TraceComponent qp = Trace.component("cfg.qp");
        assertFalse(qp.on(TraceLevel.DATA));

        Trace.configure("cfg.qp:9");
        assertTrue(qp.on(TraceLevel.DATA));

        Trace.configure("cfg.qp:1");
        assertFalse(qp.on(TraceLevel.ENTRY_EXIT));
        assertTrue(qp.on(TraceLevel.RARE), "the ring still takes level 2");
    }

    @Test
    void shouldDescribeComponentLevelChangedDirectlySoDescribeCanBeReapplied() {
        final TraceComponent direct = Trace.component("cfg.direct");
        Trace.configure("*:2,cfg.other:4");

        direct.level(8);

        final String described = Trace.describe();
        assertEquals("*:2,cfg.direct:8,cfg.other:4", described);
        Trace.configure(Trace.TRACE_DEFAULT);
        assertEquals(2, direct.level());
        Trace.configure(described);
        assertEquals(8, direct.level());
    }

    @ParameterizedTest
    @ValueSource(strings = {"cm:x", "cm:10", ":3", "CM:3", "cm", "cm:-1", "cm:", "c m:3", "cm:3:4", ""})
    void shouldRejectBadEntryNamingItAndKeepPreviousConfiguration(String badEntry) {
        final TraceComponent cm = Trace.component("cfg.keep");
        Trace.configure("*:4,cfg.keep:7");

        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Trace.configure("cfg.keep:1,*:1," + badEntry + ",cfg.after:9"));

        assertTrue(e.getMessage().startsWith("jsdp.trace: bad entry '" + badEntry + "'"), e.getMessage());
        assertEquals(7, cm.level());
        assertEquals("*:4,cfg.keep:7", Trace.describe());
    }

    @Test
    void shouldRejectDuplicateEntry() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Trace.configure("cm:3, cm:4"));
        assertTrue(e.getMessage().contains("'cm:4'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Trace.configure("*:3,*:4"));
    }

    @Test
    void shouldRejectLevelOutOfRangeOnComponent() {
        final TraceComponent component = Trace.component("cfg.range");
        assertThrows(IllegalArgumentException.class, () -> component.level(10));
        assertThrows(IllegalArgumentException.class, () -> component.level(-1));
        assertEquals(2, component.level());
    }

    @Test
    void shouldReadInitialConfigurationFromSystemPropertyAtClassInit() throws Exception {
        final Class<?> trace = loadIsolated(Trace.TRACE_PROP, "cm:7, *:4");
        assertEquals("*:4,cm:7", trace.getMethod("describe").invoke(null));
    }

    @Test
    void shouldFailClassInitNamingEntryWhenSystemPropertyIsMalformed() {
        final ExceptionInInitializerError e = assertThrows(ExceptionInInitializerError.class,
            () -> loadIsolated(Trace.TRACE_PROP, "*:2,cm:x"));
        final IllegalArgumentException cause = assertInstanceOf(IllegalArgumentException.class, e.getCause());
        assertTrue(cause.getMessage().contains("'cm:x'"), cause.getMessage());
    }

    @Test
    void shouldFailClassInitNamingPropertyWhenRingSizeIsMalformed() {
        final ExceptionInInitializerError e = assertThrows(ExceptionInInitializerError.class,
            () -> loadIsolated(FlightRecorder.RING_SIZE_PROP, "lots"));
        final IllegalArgumentException cause = assertInstanceOf(IllegalArgumentException.class, e.getCause());
        assertTrue(cause.getMessage().startsWith("jsdp.trace.ringSize: bad value 'lots'"), cause.getMessage());
    }

    /** Initializes a fresh copy of {@link Trace} with one system property set for the duration. */
    private static Class<?> loadIsolated(String property, String value) throws ClassNotFoundException {
        final String previous = System.getProperty(property);
        System.setProperty(property, value);
        try {
            return Class.forName(Trace.class.getName(), true, new IsolatingClassLoader());
        } finally {
            if (previous == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, previous);
            }
        }
    }

    /** Defines its own copies of io.jsdp.ras classes, so their static initializers run again. */
    private static final class IsolatingClassLoader extends ClassLoader {
        IsolatingClassLoader() {
            super("isolated-ras", TraceConfigurationTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith(Trace.class.getPackageName() + '.')) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> loaded = findLoadedClass(name);
                if (loaded == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        assertNotNull(in, name);
                        final byte[] bytes = in.readAllBytes();
                        loaded = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                if (resolve) {
                    resolveClass(loaded);
                }
                return loaded;
            }
        }
    }
}
