package io.jsdp.bench.cli;

import java.io.IOException;

/** The scenarios of an event-loop I/O mode ({@code --io selector}, {@code netty}), as its client runs them. */
interface EventLoopScenarios {
    /** Round trips of {@code size} bytes, one in flight on each connection. */
    void rr(int size) throws IOException;

    /** Every connection streams {@code size}-byte writes. */
    void stream(int size) throws IOException;

    /** {@code --window} echoed {@code size}-byte requests in flight on every connection. */
    void rate(int size) throws IOException;

    /** Connections opened, used once and closed. */
    void connect() throws IOException;
}
