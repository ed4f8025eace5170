package io.jsdp.bench.cli;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;

/**
 * The server of {@code --io netty}: a Netty 4.2 server on its NIO transport with one event-loop
 * thread, serving each connection as its {@link Conn} header says (echo, sink, connect), the way a
 * Netty application is written: every read handed on as it comes, writes flushed at the end of a read
 * burst, the reading paused while the peer does not take what it is sent.
 */
final class NettyServer implements BenchServer {
    private final EventLoopGroup group;
    private final Channel listener;

    NettyServer(Transport transport, boolean direct) throws IOException {
        this.group = NettyTransport.group(transport, "bench-netty-server");
        ServerBootstrap b = new ServerBootstrap().group(group)
            .channelFactory(() -> NettyTransport.serverChannel(transport))
            .childOption(ChannelOption.ALLOCATOR, NettyTransport.allocator(direct))
            .childHandler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                    NettyTransport.ready(transport, ch); // half-closable, TCP_NODELAY, and on SDP or the run fails
                    ch.pipeline().addLast(new Session());
                }
            });
        try {
            this.listener = b.bind(NettyTransport.listenAddress(transport)).sync().channel();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            group.shutdownGracefully();
            throw new IOException("interrupted while binding", e);
        } catch (RuntimeException e) {
            group.shutdownGracefully();
            throw e;
        }
    }

    /** Where clients connect: the port, or the Unix-domain socket's path. */
    @Override
    public String address() {
        SocketAddress a = listener.localAddress();
        if (a instanceof UnixDomainSocketAddress) {
            return ((UnixDomainSocketAddress) a).getPath().toString();
        }
        return Integer.toString(((InetSocketAddress) a).getPort());
    }

    /** One connection: its header first, then what its mode says. Runs on the event loop only. */
    private static final class Session extends ChannelInboundHandlerAdapter {
        private final ByteBuf header = io.netty.buffer.Unpooled.buffer(Conn.HEADER_BYTES);
        private int mode;
        private long total;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            if (mode == 0) {
                in.readBytes(header, Math.min(header.writableBytes(), in.readableBytes()));
                if (header.isWritable()) {
                    in.release();
                    return;
                }
                mode = header.readInt();
                header.release();
                if (mode == Conn.CONNECT) {
                    ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(1));
                } else if (mode != Conn.ECHO && mode != Conn.SINK) {
                    in.release();
                    ctx.close();
                    return;
                }
            }
            if (mode == Conn.ECHO && in.isReadable()) {
                ctx.write(in); // the bytes go back as they are; flushed at the end of this read burst
                return;
            }
            total += in.readableBytes();
            in.release();
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
            if (!ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(false); // the client reads no answers: stop reading requests
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                ctx.channel().config().setAutoRead(true);
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof ChannelInputShutdownEvent) {
                if (mode == Conn.SINK) {
                    ctx.writeAndFlush(ctx.alloc().buffer(8).writeLong(total)).addListener(ChannelFutureListener.CLOSE);
                } else {
                    ctx.close();
                }
                return;
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (mode == 0) {
                header.release();
                mode = -1;
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            System.err.println("bench netty server: serving a connection failed: " + cause);
            ctx.close();
        }
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }
}
