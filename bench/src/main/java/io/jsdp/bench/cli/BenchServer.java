package io.jsdp.bench.cli;

import java.io.IOException;

/** The serving side of a run, per {@code --io}: {@link Server}, {@link EventLoopServer} or {@link NettyServer}. */
interface BenchServer extends AutoCloseable {
    /** Where clients connect ({@link Transport#connect}): the port, or a Unix-domain socket's path. */
    String address() throws IOException;

    @Override
    void close() throws IOException;

    /** The server {@code options.io} calls for, listening on {@code transport}. */
    static BenchServer open(Transport transport, boolean poll, Options options) throws IOException {
        switch (options.io) {
            case SELECTOR:
                return new EventLoopServer(transport, options.direct);
            case NETTY:
                return new NettyServer(transport, options.direct);
            default:
                return new Server(transport, poll, options.direct);
        }
    }
}
