package io.jsdp.bench.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The JVMs {@link JsdpBench} starts: {@code server <transport> <variant>}, {@code client <transport>
 * <variant> <address>} or {@code both <transport> <variant>} (one JVM; variant {@code -} for the JDK's
 * transports), each followed by the measurement
 * options ({@link Options#childArgs}). It talks to the CLI in lines on standard output:
 * {@value #LISTENING} (server), {@value #INFO} (facts for the report), {@value #RESULT} (a CSV row),
 * {@value #DONE} (client). A server runs until its standard input ends; so does {@code load <n>}, the
 * {@code --load} process ({@link Load}).
 */
public final class Worker {
    static final String LISTENING = "LISTENING";
    static final String INFO = "INFO";
    static final String RESULT = "RESULT";
    static final String DONE = "DONE";
    private static final long CLOSE_GRACE_MS = 200;

    private Worker() {
    }

    /**
     * Runs one worker role.
     *
     * @param args the role, its transport (and variant and address), then the measurement options
     * @throws Exception when the role fails (the CLI then fails the run with this JVM's standard error)
     */
    public static void main(String[] args) throws Exception {
        String role = args[0];
        if (role.equals("load")) {
            Load.start(Integer.parseInt(args[1]));
            say(INFO + " pid=" + ProcessHandle.current().pid());
            waitForEndOfInput();
            System.exit(0);
        }
        Transport transport = Transport.parse(args[1]);
        String variant = args[2];
        boolean poll = transport.poll(variant.equals(Result.NO_VARIANT) ? null : SdpVariant.named(variant));
        switch (role) {
            case "server": {
                Options o = Options.parse(Arrays.copyOfRange(args, 3, args.length));
                try (BenchServer server = BenchServer.open(transport, poll, o)) {
                    say(LISTENING + " " + server.address());
                    info();
                    waitForEndOfInput();
                }
                break;
            }
            case "client": {
                Options o = Options.parse(Arrays.copyOfRange(args, 4, args.length));
                info();
                new Client(transport, poll, variant, args[3], o, r -> say(RESULT + " " + r.csv())).runAll();
                // An SDP close ends with a DisConn exchange after close() returns: let the last ones finish
                // before exiting, or the server records the connection as gone (an FFDC line in the log).
                Thread.sleep(CLOSE_GRACE_MS);
                say(DONE);
                break;
            }
            case "both": {
                Options o = Options.parse(Arrays.copyOfRange(args, 3, args.length));
                info();
                try (BenchServer server = BenchServer.open(transport, poll, o)) {
                    new Client(transport, poll, variant, server.address(), o, r -> say(RESULT + " " + r.csv())).runAll();
                }
                say(DONE);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown worker role " + role);
        }
        System.exit(0); // the provider's and the device's threads do not keep a finished worker alive
    }

    private static void info() {
        say(INFO + " pid=" + ProcessHandle.current().pid());
        say(INFO + " jdk=" + System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " "
            + System.getProperty("java.runtime.version"));
    }

    private static void waitForEndOfInput() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (in.readLine() != null) {
            // nothing is asked of a server; the end of the input is the signal to go
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
