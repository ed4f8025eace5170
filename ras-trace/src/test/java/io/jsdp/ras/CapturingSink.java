package io.jsdp.ras;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps what a component would log, as {@code "<level> <message>[ cause=<class>]"} lines. */
final class CapturingSink implements TraceSink {
    final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    public boolean isEnabled(int level) {
        return true;
    }

    @Override
    public void emit(int level, String message, Throwable cause) {
        lines.add(level + " " + message + (cause == null ? "" : " cause=" + cause.getClass().getName()));
    }
}
