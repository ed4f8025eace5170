package io.jsdp.provider.it;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The JDK's own network clients inside one JVM, whatever provider is installed JVM-wide.
 * {@code http}: an {@link HttpServer} answers a {@link HttpClient} GET, prints {@code HTTP <status> <body>}.
 * {@code udp}: a {@link DatagramChannel} echo driven by a selector, prints {@code UDP <bytes>}.
 * Both print the provider first: {@code PROVIDER <class>}.
 */
public final class DelegationMain {
    private DelegationMain() {
    }

    /**
     * Runs one check.
     *
     * @param args {@code http} or {@code udp}
     * @throws Exception on any failure
     */
    public static void main(String[] args) throws Exception {
        System.out.println("PROVIDER " + SelectorProvider.provider().getClass().getName());
        if (args[0].equals("http")) {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", ex -> {
                byte[] body = "hello over jsdp".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(200, body.length);
                ex.getResponseBody().write(body);
                ex.close();
            });
            server.start();
            try {
                HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
                URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
                for (int i = 0; i < 3; i++) {
                    HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                        HttpResponse.BodyHandlers.ofString());
                    System.out.println("HTTP " + r.statusCode() + " " + r.body());
                }
            } finally {
                server.stop(0);
            }
            return;
        }
        try (Selector sel = Selector.open();
             DatagramChannel echo = DatagramChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             DatagramChannel client = DatagramChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            echo.configureBlocking(false);
            client.configureBlocking(false);
            echo.register(sel, SelectionKey.OP_READ, "echo");
            client.register(sel, SelectionKey.OP_READ, "client");
            client.send(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}), echo.getLocalAddress());
            ByteBuffer b = ByteBuffer.allocate(64);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (System.nanoTime() < deadline) {
                sel.select(1_000);
                for (SelectionKey k : sel.selectedKeys()) {
                    if ("echo".equals(k.attachment())) {
                        b.clear();
                        var from = echo.receive(b);
                        b.flip();
                        echo.send(b, from);
                    } else {
                        b.clear();
                        client.receive(b);
                        System.out.println("UDP " + b.position() + " selector=" + sel.getClass().getSimpleName());
                        return;
                    }
                }
                sel.selectedKeys().clear();
            }
            throw new AssertionError("no UDP echo");
        }
    }
}
