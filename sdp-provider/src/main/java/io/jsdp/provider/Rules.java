package io.jsdp.provider;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.engine.SdpOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The rules file ({@code jsdp.rules}): which connections use SDP, and with which settings, per address
 * and port — the JDK's old {@code com.sun.sdp.conf} format grown by settings
 * ({@code java-nio-provider.md} §6). One rule per line, {@code #} starts a comment:
 *
 * <pre>
 * # kind     address[/prefix] | *    port[-port] | *    sdp | tcp    [setting=value ...]
 * connect    10.0.0.0/8               *                  sdp          bufferBytes=65536 receiveBuffers=32
 * connect    *                        5432               tcp
 * bind       *                        8000-8999          sdp          noDelay=true
 * </pre>
 *
 * {@code connect} rules match the destination of an outgoing connection, {@code bind} rules the local
 * address a server socket listens on. The first matching rule of the kind decides; with none, SDP is
 * tried (and falls back to TCP). Settings: {@code bufferBytes}, {@code receiveBuffers},
 * {@code sendBuffers}, {@code noDelay}, {@code spinNs}, {@code flowControl} ({@code credit},
 * {@code packetized} or {@code nic}). A malformed file fails at start-up naming the file, line and
 * rule.
 */
public final class Rules {
    /** System property: the rules file. */
    public static final String RULES_PROP = "jsdp.rules";
    /** Default of {@link #RULES_PROP}: no file, SDP tried for every connection. */
    public static final String RULES_DEFAULT = "";

    /** Whether a connection is made or a listener opened. */
    public enum Kind {
        /** Outgoing connections, matched by destination. */
        CONNECT,
        /** Server sockets, matched by the local address they listen on. */
        BIND
    }

    /** What a rule decides. */
    public record Decision(boolean sdp, SdpOptions options, String rule) {
    }

    private record Rule(Kind kind, byte[] network, int prefixBits, int portLow, int portHigh, boolean sdp,
                        Map<String, String> settings, String text) {
        boolean matches(Kind k, InetSocketAddress address) {
            if (k != kind || address.getPort() < portLow || address.getPort() > portHigh) {
                return false;
            }
            if (network == null) {
                return true;
            }
            byte[] a = address.getAddress().getAddress();
            if (a.length != network.length) {
                return false;
            }
            int bits = prefixBits;
            for (int i = 0; i < a.length && bits > 0; i++, bits -= 8) {
                int mask = bits >= 8 ? 0xFF : (0xFF << (8 - bits)) & 0xFF;
                if ((a[i] & mask) != (network[i] & mask)) {
                    return false;
                }
            }
            return true;
        }
    }

    private static final Rules NONE = new Rules(List.of(), "");
    private final List<Rule> rules;
    private final String source;

    private Rules(List<Rule> rules, String source) {
        this.rules = rules;
        this.source = source;
    }

    private static final class Holder {
        static final Rules CONFIGURED = fromSystemProperty();
    }

    /**
     * The rules {@code jsdp.rules} names, read once.
     *
     * @return the rules
     * @throws IllegalArgumentException (at first use) naming the file, line and rule when it is bad
     */
    public static Rules configured() {
        return Holder.CONFIGURED;
    }

    private static Rules fromSystemProperty() {
        String file = System.getProperty(RULES_PROP, RULES_DEFAULT).trim();
        if (file.isEmpty()) {
            return NONE;
        }
        try {
            return parse(Files.readString(Path.of(file), StandardCharsets.UTF_8), file);
        } catch (IOException e) {
            throw new IllegalArgumentException(RULES_PROP + ": cannot read " + file + ": " + e, e);
        }
    }

    /**
     * Parses rules.
     *
     * @param text the file's contents
     * @param source the file name, for messages
     * @return the rules
     * @throws IllegalArgumentException naming the line and rule of the first error
     */
    public static Rules parse(String text, String source) {
        List<Rule> out = new ArrayList<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            int hash = line.indexOf('#');
            String body = (hash >= 0 ? line.substring(0, hash) : line).trim();
            if (body.isEmpty()) {
                continue;
            }
            try {
                out.add(parseRule(body));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(RULES_PROP + ": " + source + " line " + (i + 1) + " '" + body + "': "
                    + e.getMessage(), e);
            }
        }
        return new Rules(List.copyOf(out), source);
    }

    private static Rule parseRule(String body) {
        String[] w = body.split("\\s+");
        if (w.length < 4) {
            throw new IllegalArgumentException("expected: connect|bind address[/prefix]|* port[-port]|* sdp|tcp [setting=value ...]");
        }
        Kind kind = switch (w[0].toLowerCase(Locale.ROOT)) {
            case "connect" -> Kind.CONNECT;
            case "bind" -> Kind.BIND;
            default -> throw new IllegalArgumentException("unknown kind '" + w[0] + "' (connect or bind)");
        };
        byte[] network = null;
        int prefix = 0;
        if (!w[1].equals("*")) {
            String[] ap = w[1].split("/", 2);
            try {
                network = InetAddress.getByName(ap[0]).getAddress();
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("unknown address '" + ap[0] + "'");
            }
            prefix = network.length * 8;
            if (ap.length == 2) {
                prefix = parseInt(ap[1], "prefix", 0, network.length * 8);
            }
        }
        int low = 0;
        int high = 65535;
        if (!w[2].equals("*")) {
            String[] pp = w[2].split("-", 2);
            low = parseInt(pp[0], "port", 0, 65535);
            high = pp.length == 2 ? parseInt(pp[1], "port", low, 65535) : low;
        }
        boolean sdp = switch (w[3].toLowerCase(Locale.ROOT)) {
            case "sdp" -> true;
            case "tcp" -> false;
            default -> throw new IllegalArgumentException("unknown transport '" + w[3] + "' (sdp or tcp)");
        };
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 4; i < w.length; i++) {
            String[] kv = w[i].split("=", 2);
            if (kv.length != 2) {
                throw new IllegalArgumentException("setting '" + w[i] + "' is not name=value");
            }
            settings.put(kv[0], kv[1]);
        }
        apply(settings, new SdpOptions()); // validates now: bad settings fail at start-up
        return new Rule(kind, network, prefix, low, high, sdp, Map.copyOf(settings), body);
    }

    private static int parseInt(String s, String what, int min, int max) {
        try {
            int n = Integer.parseInt(s);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("bad " + what + " '" + s + "' (" + min + " … " + max + ")");
    }

    private static SdpOptions apply(Map<String, String> settings, SdpOptions o) {
        for (Map.Entry<String, String> e : settings.entrySet()) {
            String v = e.getValue();
            switch (e.getKey()) {
                case "bufferBytes" -> o.bufferBytes(parseInt(v, "bufferBytes", SdpOptions.BUFFER_BYTES_MIN, SdpOptions.BUFFER_BYTES_MAX));
                case "receiveBuffers" -> o.receiveBuffers(parseInt(v, "receiveBuffers", SdpOptions.RECEIVE_BUFFERS_MIN,
                    SdpOptions.BUFFERS_MAX));
                case "sendBuffers" -> o.sendBuffers(parseInt(v, "sendBuffers", SdpOptions.BUFFERS_MIN, SdpOptions.BUFFERS_MAX));
                case "spinNs" -> o.spinNs(parseInt(v, "spinNs", 0, Integer.MAX_VALUE));
                case "noDelay" -> o.noDelay(parseBoolean(v));
                case "flowControl" -> o.flowControl(FlowControlScheme.fromName(v));
                case "zcopyThreshold" -> o.zcopyThreshold(parseInt(v, "zcopyThreshold (0 or at least "
                    + SdpOptions.ZCOPY_THRESHOLD_MIN + ")", 0, Integer.MAX_VALUE));
                default -> throw new IllegalArgumentException("unknown setting '" + e.getKey() + "'");
            }
        }
        return o;
    }

    private static boolean parseBoolean(String v) {
        return switch (v) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("noDelay '" + v + "' is not true or false");
        };
    }

    /**
     * What the rules say for a connection.
     *
     * @param kind connect or bind
     * @param address the destination (connect) or the local address (bind)
     * @param base the settings to start from
     * @return the decision: SDP or not, the settings, the rule that decided ({@code "default"} when none)
     */
    public Decision decide(Kind kind, InetSocketAddress address, SdpOptions base) {
        for (Rule r : rules) {
            if (r.matches(kind, address)) {
                return new Decision(r.sdp(), apply(r.settings(), base.copy()), source + ": " + r.text());
            }
        }
        return new Decision(true, base.copy(), "default");
    }

    /**
     * How many rules there are.
     *
     * @return the count
     */
    public int size() {
        return rules.size();
    }
}
