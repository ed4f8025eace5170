package io.jsdp.bench.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class OptionsTest {

    @Test
    void allMeansEveryScenarioWithEveryTransportAndTheDefaultVariants() {
        Options o = Options.parse("all");
        assertEquals(List.of(Scenario.values()), o.scenarios);
        assertEquals(List.of(Transport.TCP, Transport.TCP_POLL, Transport.UDS, Transport.SDP), o.transports);
        assertEquals(List.of("credit", "spin0", "bcopy", "zcopy", "packetized", "nic", "credit-thesis"),
            o.sdpVariants.stream().map(SdpVariant::name).toList(), "with stream and progress: the flow-control schemes too");
        assertArrayEquals(new int[] {1, 64, 1024, 16384}, o.sizes.get(Scenario.RR));
        assertArrayEquals(new int[] {64, 1024, 16384, 65536, 1048576}, o.sizes.get(Scenario.STREAM));
        assertEquals(1000, o.warmupMs);
        assertEquals(3000, o.durationMs);
        assertTrue(o.direct);
        assertFalse(o.oneJvm);
        assertFalse(o.pin);
    }

    @Test
    void quickShortensThePointsAndTheProgressSweep() {
        Options o = Options.parse("progress", "--quick");
        assertEquals(150, o.warmupMs);
        assertEquals(250, o.durationMs);
        assertArrayEquals(new int[] {0, 50, 200}, o.computesUs);
    }

    @Test
    void quickStreamAndProgressRunsCompareTheFlowControlSchemesByDefault() {
        for (String scenarios : new String[] {"stream", "progress", "all"}) {
            List<String> names = Options.parse(scenarios, "--quick").sdpVariants.stream().map(SdpVariant::name).toList();
            assertTrue(names.containsAll(List.of("credit", "packetized", "nic", "credit-thesis")), scenarios + ": " + names);
        }
        List<String> rr = Options.parse("rr", "--quick").sdpVariants.stream().map(SdpVariant::name).toList();
        assertEquals(List.of("credit", "spin0", "bcopy", "zcopy"), rr);
        List<String> chosen = Options.parse("stream", "--quick", "--sdp-variants", "credit").sdpVariants.stream()
            .map(SdpVariant::name).toList();
        assertEquals(List.of("credit"), chosen, "a variant list given wins");
    }

    @Test
    void explicitOptionsWin() {
        Options o = Options.parse("rr,stream", "--transports", "sdp,tcp", "--sdp-variants", "spin0", "--sizes", "8,4096",
            "--warmup-ms", "5", "--duration-ms", "7", "--buffer", "heap", "--one-jvm", "--pin", "--csv", "out.csv",
            "--report", "rep", "--jvm-arg", "-Xmx1g", "--window", "4");
        assertEquals(List.of(Scenario.RR, Scenario.STREAM), o.scenarios);
        assertEquals(List.of(Transport.SDP, Transport.TCP), o.transports);
        assertEquals("spin0", o.sdpVariants.get(0).name());
        assertArrayEquals(new int[] {8, 4096}, o.sizes.get(Scenario.RR));
        assertArrayEquals(new int[] {8, 4096}, o.sizes.get(Scenario.STREAM));
        assertArrayEquals(new int[] {1024}, o.sizes.get(Scenario.PROGRESS), "--sizes does not touch progress");
        assertEquals(5, o.warmupMs);
        assertEquals(7, o.durationMs);
        assertFalse(o.direct);
        assertTrue(o.oneJvm);
        assertTrue(o.pin);
        assertEquals(Path.of("out.csv"), o.csv);
        assertEquals(Path.of("rep"), o.report);
        assertEquals(List.of("-Xmx1g"), o.jvmArgs);
        assertEquals(4, o.window);
    }

    @Test
    void workersParseTheMeasurementSettingsBack() {
        Options o = Options.parse("rr,progress", "--sizes", "3,5", "--computes", "0,7", "--warmup-ms", "11",
            "--duration-ms", "13", "--buffer", "heap", "--window", "2", "--jvm-warmup-ms", "17", "--stream-nagle",
            "--stream-read-bytes", "65536");
        Options back = Options.parse(o.childArgs().toArray(new String[0]));
        assertEquals(o.scenarios, back.scenarios);
        assertArrayEquals(o.sizes.get(Scenario.RR), back.sizes.get(Scenario.RR));
        assertArrayEquals(o.computesUs, back.computesUs);
        assertEquals(11, back.warmupMs);
        assertEquals(13, back.durationMs);
        assertEquals(17, back.jvmWarmupMs);
        assertEquals(2, back.window);
        assertFalse(back.direct);
        assertTrue(back.streamNagle);
        assertFalse(Options.parse("stream").streamNagle);
        assertEquals(65536, back.streamReadBytes);
        assertEquals(0, Options.parse("stream").streamReadBytes, "the reader's buffer is the write size");
        assertThrows(IllegalArgumentException.class, () -> Options.parse("stream", "--stream-read-bytes", "0"));
    }

    @Test
    void forksAreOneByDefaultAndNotForAbRounds() {
        assertEquals(1, Options.parse("stream").forks);
        assertEquals(3, Options.parse("stream", "--forks", "3").forks);
        assertThrows(IllegalArgumentException.class, () -> Options.parse("stream", "--forks", "0"));
        assertEquals("--rounds runs each arm in fresh JVMs already: no --forks", assertThrows(IllegalArgumentException.class,
            () -> Options.parse("stream", "--transports", "sdp", "--sdp-variants", "credit,nic", "--rounds", "2", "--forks", "2"))
            .getMessage());
    }

    @Test
    void badInputIsRefusedWithTheReason() {
        assertEquals("unknown scenario 'pingpong' (rr, stream, rate, connect, progress, all)",
            assertThrows(IllegalArgumentException.class, () -> Options.parse("pingpong")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--transports", "rdma"))
            .getMessage().contains("unknown transport 'rdma'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--sdp-variants", "nope"))
            .getMessage().contains("known: credit,packetized,nic,spin0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--sizes", "64,x"))
            .getMessage().contains("'x' is not a number"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--sizes", "0"))
            .getMessage().contains("outside"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--buffer", "offheap"))
            .getMessage().contains("heap or direct"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--csv"))
            .getMessage().contains("needs a value"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--fast"))
            .getMessage().contains("unknown option '--fast'"));
        assertEquals("no scenario given", assertThrows(IllegalArgumentException.class, () -> Options.parse("--quick"))
            .getMessage());
    }

    @Test
    void variantsGiveTheirPropertiesToTheJvms() {
        assertEquals(List.of("-Djsdp.flowControl=credit"), SdpVariant.named("credit").jvmOptions());
        assertEquals(List.of("-Djsdp.flowControl=packetized"), SdpVariant.named("packetized").jvmOptions());
        assertEquals(List.of("-Djsdp.flowControl=nic"), SdpVariant.named("nic").jvmOptions());
        assertEquals(List.of("-Djsdp.soft.spinNs=0", "-Djsdp.spinNs=0"), SdpVariant.named("spin0").jvmOptions());
        assertTrue(SdpVariant.named("poll").poll() && Transport.SDP.poll(SdpVariant.named("poll")));
        assertFalse(Transport.SDP.poll(SdpVariant.named("credit")));
        assertTrue(Transport.TCP_POLL.poll(null));
        assertFalse(Transport.TCP.poll(null));
    }

    @Test
    void roundsCompareTheRunsTwoSeries() {
        Options o = Options.parse("rr", "--transports", "sdp", "--sdp-variants", "credit-notrace,credit", "--sizes", "64",
            "--rounds", "12");
        assertEquals(12, o.rounds);
        AbRounds.Arm[] arms = AbRounds.arms(o);
        assertEquals("sdp/credit-notrace", arms[0].label());
        assertEquals("sdp/credit", arms[1].label());
        assertEquals(List.of(), arms[1].extraJvmArgs());
        assertTrue(SdpVariant.named("credit-notrace").jvmOptions().containsAll(
            List.of("-Djsdp.flowControl=credit", "-Djsdp.trace.enabled=false")));
    }

    @Test
    void abJvmArgsMakeTheSecondArmOfTheOneSeries() {
        Options o = Options.parse("rr", "--transports", "sdp", "--sdp-variants", "credit", "--rounds", "3",
            "--ab-jvm-arg", "-Djsdp.trace.enabled=false", "--ab-jvm-arg", "-Xint");
        AbRounds.Arm[] arms = AbRounds.arms(o);
        assertEquals("sdp/credit", arms[0].label());
        assertEquals(List.of(), arms[0].extraJvmArgs());
        assertEquals(List.of("-Djsdp.trace.enabled=false", "-Xint"), arms[1].extraJvmArgs());
        assertEquals("credit+ab", arms[1].csvVariant());
        assertEquals("ab", AbRounds.arms(Options.parse("rr", "--transports", "tcp", "--rounds", "2", "--ab-jvm-arg", "-Xint"))[1]
            .csvVariant());
    }

    @Test
    void roundsRejectWhatTheyCannotCompare() {
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr,stream", "--transports", "sdp", "--sdp-variants",
            "credit,nic", "--rounds", "3"), "one scenario");
        assertThrows(IllegalArgumentException.class, () -> Options.parse("progress", "--transports", "sdp", "--sdp-variants",
            "credit,nic", "--rounds", "3"), "rr or stream");
        assertEquals(3, Options.parse("stream", "--transports", "sdp", "--sdp-variants", "bcopy,zcopy", "--rounds", "3").rounds);
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--transports", "sdp,tcp", "--sdp-variants",
            "credit,nic", "--rounds", "3"), "three series");
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--transports", "sdp", "--sdp-variants",
            "credit,nic", "--rounds", "3", "--ab-jvm-arg", "-Xint"), "two series and --ab-jvm-arg: three arms");
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--transports", "sdp", "--sdp-variants",
            "credit", "--ab-jvm-arg", "-Xint"), "--ab-jvm-arg without --rounds");
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--transports", "sdp", "--sdp-variants",
            "credit,nic", "--rounds", "0"), "at least one round");
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--transports", "sdp", "--sdp-variants",
            "credit,nic", "--rounds", "3", "--report", "dir"), "no report");
        assertEquals(0, Options.parse("rr").rounds);
    }

    @Test
    void theMedianRatioAndItsBootstrapIntervalComeFromTheRounds() {
        assertEquals(1.02, AbRounds.median(new double[] {1.05, 0.99, 1.02}), 1e-12);
        assertEquals(1.015, AbRounds.median(new double[] {1.05, 0.99, 1.02, 1.01}), 1e-12);
        double[] ratios = {1.004, 0.998, 1.012, 1.001, 0.995, 1.006, 1.85, 1.003, 0.999, 1.002};
        double[] ci = AbRounds.bootstrapMedianInterval(ratios, AbRounds.RESAMPLES, 1);
        double median = AbRounds.median(ratios);
        assertTrue(ci[0] <= median && median <= ci[1], ci[0] + " " + median + " " + ci[1]);
        assertTrue(ci[0] >= 0.995 && ci[1] <= 1.012, "the one round at another VM speed (1.85) does not carry the interval: "
            + ci[0] + " .. " + ci[1]);
        assertArrayEquals(ci, AbRounds.bootstrapMedianInterval(ratios, AbRounds.RESAMPLES, 1), "same seed, same interval");
        assertArrayEquals(new double[] {1.0, 1.0}, AbRounds.bootstrapMedianInterval(new double[] {1.0, 1.0, 1.0}, 100, 7));
    }

    @Test
    void theInterquartileMeanIgnoresDescheduledRoundTrips() {
        long[] sorted = {600, 640, 650, 650, 660, 670, 700, 4_000_000};
        assertEquals((650 + 650 + 660 + 670) / 4.0, Client.interquartileMean(sorted, sorted.length), 1e-9);
        assertEquals(650, Client.interquartileMean(new long[] {650}, 1), 1e-9);
    }

    @Test
    void ioLoadAndConnectionsAreParsedAndPassedToTheWorkers() {
        Options o = Options.parse("rr,rate", "--io", "selector", "--connections", "8", "--load", "2");
        assertEquals(Options.Io.SELECTOR, o.io);
        assertEquals(8, o.connections);
        assertEquals(2, o.load);
        Options child = Options.parse(o.childArgs().toArray(new String[0]));
        assertEquals(Options.Io.SELECTOR, child.io, "a worker does its I/O as the run says");
        assertEquals(8, child.connections);
        assertEquals(0, child.load, "workers start no load of their own: the CLI runs it once per series");
        assertEquals(Options.Io.BLOCKING, Options.parse("rr").io);
        assertEquals(64, Options.parse("rr").connections);
        assertEquals(1234, Options.parse("rr", Options.LOAD_PID, "1234").loadPid);
    }

    @Test
    void badIoAndLoadAndASelectorProgressRunAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--io", "epoll"));
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--load", "-1"));
        assertThrows(IllegalArgumentException.class, () -> Options.parse("rr", "--connections", "0"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Options.parse("progress", "--io", "selector"));
        assertTrue(e.getMessage().contains("progress"), e.getMessage());
    }

    @Test
    void nettyRunsWithoutUnixDomainSockets() {
        Options o = Options.parse("rr", "--io", "netty");
        assertEquals(Options.Io.NETTY, o.io);
        assertEquals(List.of(Transport.TCP, Transport.TCP_POLL, Transport.SDP), o.transports,
            "Netty's NIO transport does not half-close Unix-domain channels: uds is left out by default");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> Options.parse("rr", "--io", "netty", "--transports", "tcp,uds"));
        assertTrue(e.getMessage().contains("Unix-domain"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Options.parse("progress", "--io", "netty"));
    }
}
