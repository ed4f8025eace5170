package io.jsdp.provider;

import io.jsdp.provider.BlockedCallRaceConformanceTest.Race;
import io.jsdp.provider.BlockedChannelStopConformanceTest.Kind;

/**
 * The child JVM of {@link BlockedCallRaceConformanceTest}'s {@code read-spin} cases, started with
 * {@code jsdp.spin.adaptive=false} so that every wait may spin: runs the case over the JDK's channels,
 * then over jsdp's, and prints each outcome on a line ({@code jdk ...}, {@code jsdp ...}), or the
 * failure ({@code failed ...}).
 */
public final class SpinRaceChild {
    private SpinRaceChild() {
    }

    /**
     * Runs one case.
     *
     * @param args the thread kind and the race ({@link Kind}, {@link Race} names)
     */
    public static void main(String[] args) {
        Kind k = Kind.valueOf(args[0]);
        Race race = Race.valueOf(args[1]);
        BlockedCallRaceConformanceTest t = new BlockedCallRaceConformanceTest();
        int status = 0;
        try {
            System.out.println("jdk " + t.run("jdk", k, "read-spin", race));
            t.closeAll();
            System.out.println("jsdp " + t.jsdpOutcome(k, "read-spin", race));
            t.closeAll();
        } catch (Throwable e) {
            System.out.println("failed " + e);
            e.printStackTrace(System.out);
            status = 1;
        }
        System.out.flush();
        System.exit(status); // the test threads are daemons: a blocked one, if any, does not hold the JVM
    }
}
