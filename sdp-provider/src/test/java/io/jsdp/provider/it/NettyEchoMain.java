package io.jsdp.provider.it;

import io.jsdp.SdpSocketOptions;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A plain Netty echo server and client (NIO transport), as an application would write them; nothing
 * here knows jsdp except the line that prints the transport through Netty's generic
 * {@link NioChannelOption}. {@code server}: prints {@code READY <port>}, echoes, and prints
 * {@code SERVER <transport>} when its first connection closes. {@code client <port> <bytes>}: sends
 * seeded bytes, checks the echo, prints {@code CLIENT OK <transport>}.
 */
public final class NettyEchoMain {
    private NettyEchoMain() {
    }

    private static String transport(Channel ch) {
        try {
            String t = ch.config().getOption(NioChannelOption.of(SdpSocketOptions.TRANSPORT));
            return t == null ? "-" : t.replace(' ', '_');
        } catch (RuntimeException notJsdp) {
            return "-";
        }
    }

    /**
     * Runs one side.
     *
     * @param args {@code server} or {@code client <port> <bytes>}
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        EventLoopGroup group = new NioEventLoopGroup(1);
        try {
            if (args[0].equals("server")) {
                CompletableFuture<String> firstClosed = new CompletableFuture<>();
                Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            String t = transport(ch); // accepted and open: what it travels over
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ctx.writeAndFlush(msg);
                                }
                            });
                            ch.closeFuture().addListener(f -> firstClosed.complete(t));
                        }
                    })
                    .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
                System.out.println("READY " + ((InetSocketAddress) server.localAddress()).getPort());
                System.out.println("SERVER " + firstClosed.get(60, TimeUnit.SECONDS));
                server.close().sync();
                return;
            }
            int port = Integer.parseInt(args[1]);
            int bytes = Integer.parseInt(args[2]);
            byte[] data = new byte[bytes];
            new SplittableRandom(port).nextBytes(data);
            byte[] got = new byte[bytes];
            CompletableFuture<Void> done = new CompletableFuture<>();
            int[] received = {0};
            ChannelFuture cf = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(data));
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf b = (ByteBuf) msg;
                        int n = Math.min(b.readableBytes(), bytes - received[0]);
                        b.readBytes(got, received[0], n);
                        received[0] += n;
                        b.release();
                        if (received[0] == bytes) {
                            done.complete(null);
                        }
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        done.completeExceptionally(cause);
                    }
                })
                .connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)).sync();
            done.get(60, TimeUnit.SECONDS);
            if (!Arrays.equals(got, data)) {
                throw new AssertionError("echo differs");
            }
            String t = transport(cf.channel());
            cf.channel().close().sync();
            System.out.println("CLIENT OK " + t);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
