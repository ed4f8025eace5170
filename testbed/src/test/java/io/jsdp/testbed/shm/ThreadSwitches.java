package io.jsdp.testbed.shm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every thread's context switches of a process, from {@code /proc/<pid>/task/<tid>/status}: what the
 * wake-up tests count to show which threads a message runs.
 */
public final class ThreadSwitches {
    private ThreadSwitches() {
    }

    /**
     * Voluntary plus involuntary context switches of every thread of {@code pid}, by "name/tid" (the
     * name as /proc has it: at most 15 characters; a JVM's main thread is named after the process).
     *
     * @param pid the process
     * @return the switches by thread
     * @throws IOException when the process cannot be read
     */
    public static Map<String, Long> of(long pid) throws IOException {
        Map<String, Long> out = new TreeMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : tasks) {
                String name = null;
                long switches = 0;
                try {
                    for (String l : Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("Name:")) {
                            name = l.substring(5).trim();
                        } else if (l.startsWith("voluntary_ctxt_switches:") || l.startsWith("nonvoluntary_ctxt_switches:")) {
                            switches += Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException gone) {
                    continue; // the thread ended meanwhile
                }
                out.put(name + "/" + t.getFileName(), switches);
            }
        }
        return out;
    }

    /**
     * What moved between two readings; threads that did not switch are left out.
     *
     * @param before the earlier reading
     * @param after the later one
     * @return the switches in between, by thread
     */
    public static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d > 0) {
                out.put(k, d);
            }
        });
        return out;
    }

    /**
     * The switches of the threads whose "name/tid" starts with {@code prefix}.
     *
     * @param m a reading or a delta
     * @param prefix the start of the names
     * @return their sum
     */
    public static long sum(Map<String, Long> m, String prefix) {
        return m.entrySet().stream().filter(e -> e.getKey().startsWith(prefix)).mapToLong(Map.Entry::getValue).sum();
    }
}
