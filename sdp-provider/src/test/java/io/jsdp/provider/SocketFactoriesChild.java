package io.jsdp.provider;

import io.jsdp.SdpSocketOptions;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link SocketFactoriesForkedTest}: installs the factories, then runs plain
 * {@code java.net} code and prints what it saw, one line a fact.
 * <ul>
 *   <li>{@code echo}: a ServerSocket and a Socket echo 1 MiB; prints {@code echo ok transport=...}, and
 *       {@code second install: ...} for a second {@link SocketFactories#install()}.</li>
 *   <li>{@code vthreads N}: N virtual threads block in reads on N jsdp sockets while 2 carriers run
 *       the scheduler; another virtual thread must still run ({@code ticker ran}); then every reader
 *       gets its byte ({@code reads done N}).</li>
 * </ul>
 */
public final class SocketFactoriesChild {
    private SocketFactoriesChild() {
    }

    /**
     * Runs a mode.
     *
     * @param args the mode and its arguments
     * @throws Exception on failure (printed by the JVM; the test sees no success line)
     */
    public static void main(String[] args) throws Exception {
        // small SDP buffers, so a thousand connections fit the child's heap; set before jsdp loads
        System.setProperty("jsdp.bufferBytes", "1024");
        System.setProperty("jsdp.receiveBuffers", "4");
        System.setProperty("jsdp.sendBuffers", "4");
        System.setProperty("jdk.virtualThreadScheduler.parallelism", "2");
        SocketFactories.install();
        System.out.println("installed");
        if (args[0].equals("echo")) {
            echo();
        } else {
            virtualThreads(Integer.parseInt(args[1]));
        }
        System.out.flush();
        System.exit(0);
    }

    private static void echo() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread echo = new Thread(() -> {
                try (Socket a = server.accept()) {
                    a.getInputStream().transferTo(a.getOutputStream());
                } catch (IOException e) {
                    e.printStackTrace(System.out);
                }
            });
            echo.start();
            byte[] data = new byte[1 << 20];
            new java.util.SplittableRandom(9).nextBytes(data);
            try (Socket c = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                Thread writer = new Thread(() -> {
                    try {
                        c.getOutputStream().write(data);
                        c.shutdownOutput();
                    } catch (IOException e) {
                        e.printStackTrace(System.out);
                    }
                });
                writer.start();
                byte[] got = c.getInputStream().readAllBytes();
                writer.join();
                System.out.println("echo " + (Arrays.equals(data, got) ? "ok" : "CORRUPT " + got.length) + " transport="
                    + c.getOption(SdpSocketOptions.TRANSPORT));
            }
            echo.join();
        }
        try {
            SocketFactories.install();
            System.out.println("second install: accepted");
        } catch (IOException refused) {
            System.out.println("second install: " + refused.getMessage());
        }
    }

    private static void virtualThreads(int n) throws Exception {
        try (ServerSocket server = new ServerSocket(0, n, InetAddress.getLoopbackAddress())) {
            List<Socket> accepted = new ArrayList<>();
            Thread acceptor = new Thread(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        accepted.add(server.accept());
                    }
                } catch (IOException e) {
                    e.printStackTrace(System.out);
                }
            });
            acceptor.start();
            List<Socket> clients = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                clients.add(new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort()));
            }
            acceptor.join();
            System.out.println("connected " + n + " transport=" + clients.get(0).getOption(SdpSocketOptions.TRANSPORT));
            CountDownLatch reading = new CountDownLatch(n);
            CountDownLatch done = new CountDownLatch(n);
            AtomicInteger good = new AtomicInteger();
            for (Socket c : clients) {
                InputStream in = c.getInputStream();
                VirtualThreadsForTests.start(() -> {
                    reading.countDown();
                    try {
                        if (in.read() == 1) {
                            good.incrementAndGet();
                        }
                    } catch (IOException e) {
                        e.printStackTrace(System.out);
                    }
                    done.countDown();
                });
            }
            reading.await();
            Thread.sleep(500); // all of them into their waits
            CountDownLatch ticked = new CountDownLatch(1);
            VirtualThreadsForTests.start(ticked::countDown);
            System.out.println(ticked.await(10, TimeUnit.SECONDS) ? "ticker ran" : "ticker starved");
            for (Socket a : accepted) {
                a.getOutputStream().write(1);
            }
            System.out.println(done.await(30, TimeUnit.SECONDS) ? "reads done " + good.get() : "reads stuck "
                + done.getCount());
        }
    }
}
