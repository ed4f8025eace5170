package io.jsdp.provider;

import java.lang.management.LockInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;

/** Full thread dumps for tests that fail on a hang: every frame, and who holds which lock. */
final class ThreadDumps {
    private ThreadDumps() {
    }

    /**
     * Dumps every platform thread with its locks, and {@code extra} (a virtual thread is not in the
     * management bean's dump).
     *
     * @param extra threads to add by their stack traces, may be empty
     * @return the dump
     */
    static String all(Thread... extra) {
        StringBuilder b = new StringBuilder();
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            // ThreadInfo.toString() cuts the stack at 8 frames, too few to see a lock cycle
            b.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                b.append(" on ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                b.append(" owned by \"").append(t.getLockOwnerName()).append('"');
            }
            b.append('\n');
            StackTraceElement[] stack = t.getStackTrace();
            for (int i = 0; i < stack.length; i++) {
                b.append("\tat ").append(stack[i]).append('\n');
                for (MonitorInfo m : t.getLockedMonitors()) {
                    if (m.getLockedStackDepth() == i) {
                        b.append("\t- locked ").append(m).append('\n');
                    }
                }
            }
            for (LockInfo l : t.getLockedSynchronizers()) {
                b.append("\t- holds ").append(l).append('\n');
            }
            b.append('\n');
        }
        for (Thread t : extra) {
            b.append('"').append(t).append("\" ").append(t.getState()).append('\n');
            for (StackTraceElement e : t.getStackTrace()) {
                b.append("\tat ").append(e).append('\n');
            }
            b.append('\n');
        }
        return b.toString();
    }
}
