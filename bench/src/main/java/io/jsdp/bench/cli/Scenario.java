package io.jsdp.bench.cli;

import java.util.Locale;

/** What the CLI measures; the names are the contract other tools parse. */
enum Scenario {
    /** Request/response round trip: write N bytes, read the N-byte echo; latency percentiles. */
    RR(new int[] {1, 64, 1024, 16384}),
    /** One-way throughput: N-byte writes for a while, counted as delivered by the receiver. */
    STREAM(new int[] {64, 1024, 16384, 65536, 1048576}),
    /** Small messages per second: N-byte requests pipelined, {@link Options#window} in flight, echoed. */
    RATE(new int[] {64}),
    /** Connections per second: open, one exchange (16-byte header, 1-byte answer), close. */
    CONNECT(new int[] {16}),
    /**
     * The thesis' communication-progress test (seed 001 §4.4): bursts of 100 × 1 KiB each way with a
     * fixed computation between the send and the receive on both sides; iteration latency against
     * the computation time, which goes in the CSV's {@code size_bytes} column, in µs.
     */
    PROGRESS(new int[] {1024});

    private final int[] defaultSizes;

    Scenario(int[] defaultSizes) {
        this.defaultSizes = defaultSizes;
    }

    /** The message sizes run unless {@code --sizes} says otherwise. */
    int[] defaultSizes() {
        return defaultSizes.clone();
    }

    /** The command-line and CSV name. */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Scenario parse(String s) {
        for (Scenario sc : values()) {
            if (sc.id().equals(s)) {
                return sc;
            }
        }
        throw new IllegalArgumentException("unknown scenario '" + s + "' (rr, stream, rate, connect, progress, all)");
    }
}
