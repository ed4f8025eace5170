package io.jsdp.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CpuMeterTest {

    @Test
    void busyTicksCountUserNiceSystemIrqSoftirqAndStealButNotIdleOrIowait() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        assertEquals(1 + 2 + 3 + 6 + 7 + 8, CpuMeter.busyTicks("cpu  1 2 3 4000 500 6 7 8 9 10"));
        assertThrows(IllegalArgumentException.class, () -> CpuMeter.busyTicks("cpu0 1 2 3 4 5 6 7 8"));
    }

    @Test
    void processTicksAreUtimePlusStimeEvenWithSpacesAndParenthesesInTheName() {
        String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 0 0 20 0 30 0 12345 0 0";
        assertEquals(325, CpuMeter.processTicks(stat));
    }

    @Test
    void aBusyLoopInThisProcessShowsUpAsCpuTimeButNotWhenItIsTheLoadProcess() throws Exception {
        long self = ProcessHandle.current().pid();
        CpuMeter all = CpuMeter.start(0);
        CpuMeter withoutSelf = CpuMeter.start(self);
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
        long x = 0;
        while (System.nanoTime() - end < 0) {
            x += x * 31 + 7;
        }
        Load.sink = x;
        double counted = all.perOpUs(1);
        double excluded = withoutSelf.perOpUs(1);
        assertTrue(counted >= 200_000, "300 ms of spinning counts at least 200 ms of CPU: " + counted + " us");
        assertTrue(excluded < counted - 150_000, "the load process's own time is left out: " + excluded + " of " + counted);
        assertTrue(Double.isNaN(all.perOpUs(0)), "no operations: no figure");
    }
}
