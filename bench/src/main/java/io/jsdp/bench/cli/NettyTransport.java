package io.jsdp.bench.cli;

import io.jsdp.SdpSocketOptions;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DuplexChannelConfig;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code --io netty}: Netty's NIO transport over each bench transport, as an application sets it up:
 * an event-loop group of one thread whose selectors, and channels whose JDK channels, come from the
 * transport's {@link java.nio.channels.spi.SelectorProvider} (jsdp's for SDP, the JDK's otherwise;
 * Unix-domain channels for UDS).
 */
final class NettyTransport {
    private NettyTransport() {
    }

    /** One event-loop thread on {@code transport}'s provider. */
    static EventLoopGroup group(Transport transport, String threadName) {
        return new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(threadName, true),
            NioIoHandler.newFactory(transport.provider()));
    }

    static ServerChannel serverChannel(Transport transport) {
        return transport == Transport.UDS ? new NioServerDomainSocketChannel(transport.provider())
            : new NioServerSocketChannel(transport.provider());
    }

    static Channel channel(Transport transport) {
        return transport == Transport.UDS ? new NioDomainSocketChannel(transport.provider())
            : new NioSocketChannel(transport.provider());
    }

    /** Netty's pooled allocator, with direct buffers unless {@code --buffer heap}. */
    static ByteBufAllocator allocator(boolean direct) {
        return new PooledByteBufAllocator(direct);
    }

    /** Loopback, port chosen by the system; a socket file in a new temporary directory for UDS. */
    static SocketAddress listenAddress(Transport transport) throws IOException {
        if (transport == Transport.UDS) {
            Path dir = Files.createTempDirectory("jsdp-bench");
            dir.toFile().deleteOnExit();
            Path file = dir.resolve("s");
            file.toFile().deleteOnExit();
            return UnixDomainSocketAddress.of(file);
        }
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    /**
     * Lets a connection half-close, sets {@code TCP_NODELAY} on Internet channels and checks that an SDP channel travels over SDP,
     * as {@link Transport#ready} does for the JDK's channels.
     *
     * @throws IllegalStateException when an SDP channel fell back to TCP
     */
    static void ready(Transport transport, Channel ch) {
        // a sink answers after the client's shutdownOutput (ChannelOption.ALLOW_HALF_CLOSURE: not for Unix-domain channels)
        ((DuplexChannelConfig) ch.config()).setAllowHalfClosure(true);
        if (transport != Transport.UDS) {
            ch.config().setOption(ChannelOption.TCP_NODELAY, true);
        }
        if (transport == Transport.SDP) {
            String how = describe(ch);
            if (how == null || !how.startsWith("sdp")) {
                throw new IllegalStateException("the SDP connection fell back to TCP, so this would not measure SDP: "
                    + SdpSocketOptions.TRANSPORT + " = " + how);
            }
        }
    }

    /** What {@link SdpSocketOptions#TRANSPORT} says on a connected SDP channel. */
    static String describe(Channel ch) {
        return ch.config().getOption(NioChannelOption.of(SdpSocketOptions.TRANSPORT));
    }
}
