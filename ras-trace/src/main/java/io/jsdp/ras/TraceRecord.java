package io.jsdp.ras;

/**
 * One record read back from the {@link FlightRecorder}.
 *
 * @param sequence   position in the ring's append order since it was created; gaps mean records were overwritten
 * @param timeNanos  {@link System#nanoTime()} at append
 * @param epochMillis {@link System#currentTimeMillis()} at append, to line records up with log files
 * @param threadId   id of the appending thread
 * @param threadName name of the appending thread
 * @param component  trace component name, e.g. {@code "cm"}
 * @param level      trace level, see {@link TraceLevel}
 * @param event      event name, a constant such as {@code "qp.toError"}
 * @param words      how many of {@code d1..d4} carry data, 0..4
 * @param d1         first data word, 0 when unused
 * @param d2         second data word, 0 when unused
 * @param d3         third data word, 0 when unused
 * @param d4         fourth data word, 0 when unused
 * @param causeClass class name of the throwable recorded with the event, or {@code null}
 */
public record TraceRecord(
    long sequence,
    long timeNanos,
    long epochMillis,
    long threadId,
    String threadName,
    String component,
    int level,
    String event,
    int words,
    long d1,
    long d2,
    long d3,
    long d4,
    String causeClass) {

    /**
     * One readable line, time relative to when the JVM's first ring was created, e.g.
     * {@code +12.345678ms [main#1] cm L2 cm.rejected d1=0x5 d2=0x0}.
     *
     * @return the rendered record
     */
    @Override
    public String toString() {
        return render(FlightRecorder.ORIGIN_NANOS);
    }

    /**
     * One readable line with the time relative to {@code originNanos}, e.g. the first record of a dump.
     *
     * @param originNanos a {@link System#nanoTime()} value
     * @return the rendered record
     */
    public String render(long originNanos) {
        final StringBuilder line = new StringBuilder(96);
        final long relativeNanos = timeNanos - originNanos;
        final long magnitude = Math.abs(relativeNanos);
        final String fraction = Long.toString(magnitude % 1_000_000L);
        line.append(relativeNanos < 0 ? '-' : '+').append(magnitude / 1_000_000L).append('.');
        line.append("000000", fraction.length(), 6).append(fraction).append("ms");
        line.append(" [").append(threadName).append('#').append(threadId).append("] ");
        line.append(component).append(" L").append(level).append(' ');
        appendEvent(line, event, words, d1, d2, d3, d4);
        if (causeClass != null) {
            line.append(" cause=").append(causeClass);
        }
        return line.toString();
    }

    /** {@code event d1=0x.. d2=0x..} with only the words in use; shared with the log message. */
    static StringBuilder appendEvent(StringBuilder out, String event, int words, long d1, long d2, long d3, long d4) {
        out.append(event);
        if (words >= 1) {
            out.append(" d1=0x").append(Long.toHexString(d1));
        }
        if (words >= 2) {
            out.append(" d2=0x").append(Long.toHexString(d2));
        }
        if (words >= 3) {
            out.append(" d3=0x").append(Long.toHexString(d3));
        }
        if (words >= 4) {
            out.append(" d4=0x").append(Long.toHexString(d4));
        }
        return out;
    }
}
