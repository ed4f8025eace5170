package io.jsdp.provider.it;

/**
 * What {@link NettyNativeTransportsIT} asks a JVM: whether Netty's epoll transport, and the one shaded into
 * grpc-netty-shaded, are available, with the "no native" property each reads and the cause each gives.
 * Prints one line per copy, {@code NETTY ...} and {@code GRPC ...}, then {@code DONE}.
 */
public final class NettyNativeMain {
    private NettyNativeMain() {
    }

    /**
     * Prints the lines.
     *
     * @param args none
     */
    public static void main(String[] args) {
        System.out.println(line("NETTY", io.netty.channel.epoll.Epoll.isAvailable(), "io.netty.transport.noNative",
            io.netty.channel.epoll.Epoll.unavailabilityCause()));
        System.out.println(line("GRPC", io.grpc.netty.shaded.io.netty.channel.epoll.Epoll.isAvailable(),
            "io.grpc.netty.shaded.io.netty.transport.noNative",
            io.grpc.netty.shaded.io.netty.channel.epoll.Epoll.unavailabilityCause()));
        System.out.println("DONE");
    }

    private static String line(String copy, boolean available, String property, Throwable cause) {
        return copy + " available=" + available + " " + property + "=" + System.getProperty(property) + " cause="
            + (cause == null ? "-" : cause.toString().replace('\n', ' '));
    }
}
