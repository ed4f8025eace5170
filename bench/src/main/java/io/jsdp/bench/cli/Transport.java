package io.jsdp.bench.cli;

import io.jsdp.SdpSelectorProvider;
import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Pipe;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The transports compared in one run. Each opens its listener and its client channels the way an
 * application would; {@link #SDP} through {@link SdpSelectorProvider}'s channels, what users deploy,
 * and every SDP channel is checked to really be SDP (a fallback to TCP fails the run).
 */
enum Transport {
    /** JDK loopback TCP, blocking channels, {@code TCP_NODELAY}. */
    TCP("tcp", false, "block (kernel wait)"),
    /** JDK loopback TCP, non-blocking channels spinning on {@code read}/{@code write}, {@code TCP_NODELAY}. */
    TCP_POLL("tcp-poll", true, "spin (non-blocking busy-poll)"),
    /** JDK Unix-domain {@code SocketChannel}s, blocking. */
    UDS("uds", false, "block (kernel wait)"),
    /** jsdp: {@code io.jsdp.SdpSelectorProvider}'s channels, blocking mode (the engine's spin window applies). */
    SDP("sdp", false, null);

    private final String id;
    private final boolean poll;
    private final String waits;

    Transport(String id, boolean poll, String waits) {
        this.id = id;
        this.poll = poll;
        this.waits = waits;
    }

    /** The command-line and CSV name. */
    String id() {
        return id;
    }

    /** Whether both ends busy-poll non-blocking channels instead of blocking (SDP: per variant). */
    boolean poll(SdpVariant variant) {
        return this == SDP ? variant != null && variant.poll() : poll;
    }

    /** How a blocked read or write waits; for SDP the variant says. */
    String waits(SdpVariant variant) {
        return this == SDP ? variant.waits() : waits;
    }

    static Transport parse(String s) {
        for (Transport t : values()) {
            if (t.id.equals(s.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport '" + s + "' (tcp, tcp-poll, uds, sdp)");
    }

    /** One provider per JVM is enough: the provider keeps no per-instance state. */
    private static final class Sdp {
        static final SdpSelectorProvider PROVIDER = new SdpSelectorProvider();
    }

    /**
     * Opens a listener on loopback (a Unix-domain socket file in the temporary directory for
     * {@link #UDS}); blocking.
     */
    ServerSocketChannel listen() throws IOException {
        switch (this) {
            case UDS: {
                Path dir = Files.createTempDirectory("jsdp-bench");
                dir.toFile().deleteOnExit();
                Path file = dir.resolve("s");
                file.toFile().deleteOnExit();
                return ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(file));
            }
            case SDP:
                return Sdp.PROVIDER.openServerSocketChannel().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            default:
                return ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        }
    }

    /** The listener's address in the form {@link #connect} takes. */
    String address(ServerSocketChannel listener) throws IOException {
        SocketAddress a = listener.getLocalAddress();
        if (a instanceof UnixDomainSocketAddress) {
            return ((UnixDomainSocketAddress) a).getPath().toString();
        }
        return Integer.toString(((InetSocketAddress) a).getPort());
    }

    /** An unconnected channel of this transport. */
    SocketChannel open() throws IOException {
        switch (this) {
            case UDS:
                return SocketChannel.open(StandardProtocolFamily.UNIX);
            case SDP:
                return Sdp.PROVIDER.openSocketChannel();
            default:
                return SocketChannel.open();
        }
    }

    /** {@code address} ({@link #address}) as a socket address to connect to. */
    SocketAddress remote(String address) {
        return this == UDS ? UnixDomainSocketAddress.of(address)
            : new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(address));
    }

    /**
     * The selector an application on this transport opens: {@link SdpSelectorProvider}'s for SDP (what
     * {@code Selector.open()} returns with jsdp JVM-wide), the JDK's otherwise.
     */
    Selector openSelector() throws IOException {
        return this == SDP ? Sdp.PROVIDER.openSelector() : Selector.open();
    }

    /** The provider an application's channels and selectors come from on this transport (Netty's NIO transport takes it). */
    java.nio.channels.spi.SelectorProvider provider() {
        return this == SDP ? Sdp.PROVIDER : java.nio.channels.spi.SelectorProvider.provider();
    }

    /** A pipe from the same provider as {@link #openSelector} (jsdp's provider hands out the JDK's pipe). */
    Pipe openPipe() throws IOException {
        return this == SDP ? Sdp.PROVIDER.openPipe() : Pipe.open();
    }

    /** Connects a channel to {@code address} ({@link #address}) and readies it ({@link #ready}). */
    SocketChannel connect(String address, boolean poll) throws IOException {
        SocketChannel ch = open();
        try {
            ch.connect(remote(address));
            ready(ch, poll);
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Sets {@code TCP_NODELAY} on Internet channels, checks an SDP channel travels over SDP, and makes
     * the channel non-blocking when {@code poll}.
     *
     * @throws IllegalStateException when an SDP channel fell back to TCP
     */
    void ready(SocketChannel ch, boolean poll) throws IOException {
        if (this != UDS) {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
        if (this == SDP) {
            String how = ch.getOption(SdpSocketOptions.TRANSPORT);
            if (how == null || !how.startsWith("sdp")) {
                throw new IllegalStateException("the SDP connection fell back to TCP, so this would not measure SDP: "
                    + SdpSocketOptions.TRANSPORT + " = " + how);
            }
        }
        if (poll) {
            ch.configureBlocking(false);
        }
    }

    /** For SDP, what {@link SdpSocketOptions#TRANSPORT} says on a connected channel; else null. */
    static String describe(SocketChannel ch) throws IOException {
        return ch.getOption(SdpSocketOptions.TRANSPORT);
    }
}
