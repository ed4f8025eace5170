package io.jsdp.ras;

import java.time.Instant;
import java.util.List;

/**
 * One first-failure data capture record; see {@link Ffdc}.
 *
 * @param id a JVM-wide sequence number, from 1
 * @param timeMillis wall-clock time of the capture
 * @param component the reporting component
 * @param kind the failure kind, a constant such as {@code "protocol.MSEQ_OUT_OF_ORDER"}
 * @param summary one line
 * @param snapshot the failing object's state
 * @param history the flight recorder's most recent records, rendered, oldest first
 */
public record FfdcRecord(long id, long timeMillis, String component, String kind, String summary, String snapshot,
                         List<String> history) {

    /**
     * The record as the text written to a file.
     *
     * @return several lines
     */
    public String render() {
        StringBuilder b = new StringBuilder(256 + snapshot.length());
        b.append("jsdp FFDC record ").append(id).append('\n')
            .append("time: ").append(Instant.ofEpochMilli(timeMillis)).append('\n')
            .append("pid: ").append(ProcessHandle.current().pid()).append('\n')
            .append("component: ").append(component).append('\n')
            .append("kind: ").append(kind).append('\n')
            .append("summary: ").append(summary).append('\n')
            .append("--- snapshot\n").append(snapshot);
        if (!snapshot.endsWith("\n")) {
            b.append('\n');
        }
        b.append("--- flight recorder (").append(history.size()).append(" most recent)\n");
        for (String h : history) {
            b.append(h).append('\n');
        }
        return b.toString();
    }
}
