package io.jsdp.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jsdp.flow.engine.SdpOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The rules file: matching by kind, address prefix and port range, first match wins, errors named. */
@Timeout(10)
class RulesTest {
    private static final String FILE = """
        # a comment line
        connect 10.1.0.0/16   *          tcp                 # the old cluster has no RDMA
        connect 10.0.0.0/8    7000-7999  sdp   bufferBytes=65536 receiveBuffers=32 noDelay=true zcopyThreshold=262144
        connect 10.0.0.0/8    *          sdp
        bind    *             5432       tcp
        bind    *             6000       sdp   flowControl=nic
        """;

    private static InetSocketAddress at(String host, int port) throws Exception {
        return new InetSocketAddress(InetAddress.getByName(host), port);
    }

    @Test
    void theFirstMatchingRuleOfTheKindDecides() throws Exception {
        Rules r = Rules.parse(FILE, "test.rules");
        assertEquals(5, r.size());
        assertEquals(io.jsdp.flow.FlowControlScheme.NIC, r.decide(Rules.Kind.BIND, at("0.0.0.0", 6000), new SdpOptions())
            .options().flowControl(), "a rule's flowControl setting");
        Rules.Decision d = r.decide(Rules.Kind.CONNECT, at("10.1.2.3", 7001), new SdpOptions());
        assertFalse(d.sdp());
        assertTrue(d.rule().startsWith("test.rules: connect 10.1.0.0/16"), d.rule());
        d = r.decide(Rules.Kind.CONNECT, at("10.2.2.3", 7001), new SdpOptions());
        assertTrue(d.sdp());
        assertEquals(65_536, d.options().bufferBytes());
        assertEquals(32, d.options().receiveBuffers());
        assertTrue(d.options().noDelay());
        assertEquals(262_144, d.options().zcopyThreshold());
        d = r.decide(Rules.Kind.CONNECT, at("10.2.2.3", 8000), new SdpOptions().bufferBytes(4096));
        assertTrue(d.sdp());
        assertEquals(4096, d.options().bufferBytes(), "no settings: the base stays");
        assertFalse(r.decide(Rules.Kind.BIND, at("0.0.0.0", 5432), new SdpOptions()).sdp());
        assertTrue(r.decide(Rules.Kind.CONNECT, at("127.0.0.1", 5432), new SdpOptions()).sdp(), "bind rules are not connect rules");
        assertEquals("default", r.decide(Rules.Kind.CONNECT, at("192.168.0.1", 1), new SdpOptions()).rule());
    }

    @Test
    void prefixesMatchBitByBit() throws Exception {
        Rules r = Rules.parse("connect 192.168.4.0/22 * tcp", "x");
        assertFalse(r.decide(Rules.Kind.CONNECT, at("192.168.7.255", 1), new SdpOptions()).sdp());
        assertTrue(r.decide(Rules.Kind.CONNECT, at("192.168.8.0", 1), new SdpOptions()).sdp());
        assertTrue(r.decide(Rules.Kind.CONNECT, at("::1", 1), new SdpOptions()).sdp(), "another family never matches");
    }

    @Test
    void aBadRuleFailsNamingTheFileLineAndRule() {
        for (String bad : new String[] {"listen * * sdp", "connect 10.0.0.0/33 * sdp", "connect * 70000 sdp", "connect * 9-8 sdp",
            "connect * * rdma", "connect * * sdp bufferBytes=12", "connect * * sdp receiveBuffers=2", "connect * * sdp color=blue",
            "connect * * sdp flowControl=window", "connect * *", "connect * * sdp noDelay=yes",
            "connect * * sdp zcopyThreshold=100", "connect * * sdp zcopyThreshold=-1"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Rules.parse("# ok\n" + bad, "r.conf"),
                bad);
            assertTrue(e.getMessage().startsWith("jsdp.rules: r.conf line 2 '" + bad + "': "), e.getMessage());
        }
    }
}
