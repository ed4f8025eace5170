package io.jsdp.bench.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time spent on this machine over a measurement, less what the {@code --load} process spent:
 * what both benchmark JVMs, the kernel on their behalf and anything else running took. Read from
 * {@code /proc/stat} (every CPU's busy ticks: user, nice, system, irq, softirq, steal) and the load
 * process's {@code /proc/<pid>/stat} (utime + stime). Linux reports both in USER_HZ ticks, which is
 * 100 per second on every architecture the JDK runs on, so a figure is good to 10 ms of CPU time:
 * over a 3 s point on 2 CPUs, to about 0.2 %.
 */
final class CpuMeter {
    /** Linux's USER_HZ: the unit of {@code /proc/stat} and {@code /proc/<pid>/stat} times. */
    static final long TICKS_PER_SECOND = 100;

    private final long loadPid;
    private final long machineStart;
    private final long loadStart;

    private CpuMeter(long loadPid) {
        this.loadPid = loadPid;
        this.machineStart = machineBusyTicks();
        this.loadStart = processTicks(loadPid);
    }

    /**
     * Starts measuring.
     *
     * @param loadPid the {@code --load} process, whose time is not counted; 0 for none
     */
    static CpuMeter start(long loadPid) {
        return new CpuMeter(loadPid);
    }

    /**
     * CPU time per operation since {@link #start}, in µs; NaN when this is not Linux or there were no
     * operations.
     */
    double perOpUs(double ops) {
        long machine = machineBusyTicks() - machineStart;
        long load = processTicks(loadPid) - loadStart;
        if (machineStart < 0 || machine < 0 || ops <= 0) {
            return Double.NaN;
        }
        long ticks = Math.max(0, machine - Math.max(0, load));
        return ticks * (1e6 / TICKS_PER_SECOND) / ops;
    }

    /** Busy ticks of all CPUs since boot; -1 when unreadable. */
    static long machineBusyTicks() {
        try {
            String line = Files.readAllLines(Path.of("/proc/stat")).get(0);
            return busyTicks(line);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * The busy ticks of {@code /proc/stat}'s {@code cpu} line: user, nice, system, irq, softirq and
     * steal (guest time is already inside user); idle and iowait are not busy.
     */
    static long busyTicks(String cpuLine) {
        String[] f = cpuLine.trim().split("\\s+");
        if (!f[0].equals("cpu")) {
            throw new IllegalArgumentException("not the cpu line of /proc/stat: " + cpuLine);
        }
        long busy = 0;
        int[] fields = {1, 2, 3, 6, 7, 8}; // user nice system (idle iowait) irq softirq steal
        for (int i : fields) {
            if (i < f.length) {
                busy += Long.parseLong(f[i]);
            }
        }
        return busy;
    }

    /** utime + stime of process {@code pid} (all its threads); 0 for pid 0 or a process gone. */
    static long processTicks(long pid) {
        if (pid <= 0) {
            return 0;
        }
        try {
            return processTicks(Files.readString(Path.of("/proc/" + pid + "/stat")));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** utime + stime from a {@code /proc/<pid>/stat} line (fields 14 and 15, counted after the command's ')'). */
    static long processTicks(String statLine) {
        String[] f = statLine.substring(statLine.lastIndexOf(')') + 2).trim().split("\\s+");
        // f[0] is field 3 (state): utime is field 14, stime 15
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
