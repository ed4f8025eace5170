package io.jsdp.testbed;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnknownHostException;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-JVM fabric: the "network" joining every SoftRdma device of this JVM. It holds the
 * connection manager's port space (bound ids by port) and the lock that serialises connection
 * state changes on both ends of a connection.
 *
 * <p>An address is on the fabric when it is an address of this host (loopback, wildcard or an
 * interface address); ports are one space for all of them (one id a port, whatever address it bound),
 * but a listener takes only the connections TCP's would: those addressed to the address it bound, or
 * any for the wildcard ({@link #accepts}). Ids of
 * host-fabric devices also claim their bound ports host-wide ({@link PortClaim}, {@link HostCm}), so a
 * port is free for them only when it is free in this JVM and in every other live process.
 */
final class InJvmFabric {
    static final InJvmFabric INSTANCE = new InJvmFabric();
    private static final int EPHEMERAL_FIRST = 49_152;
    private static final int EPHEMERAL_LAST = 65_535;
    /** How long {@link #isLocal} and {@link #routedSource} trust what they found. */
    private static final long LOCAL_TTL_NS = 1_000_000_000L;

    /** Serialises connection-manager state changes on both ids of a connection. Taken before queue-pair locks. */
    final ReentrantLock cmLock = new ReentrantLock();
    /** Bound ids by port; guarded by cmLock for changes. */
    private final Map<Integer, SoftCmId> bound = new ConcurrentHashMap<>();
    /** What {@link #isLocal} found lately, with when: interfaces and their addresses come and go. */
    private final Map<InetAddress, Known> localAddresses = new ConcurrentHashMap<>();
    /** What {@link #routedSource} found lately, with when (null source: no route). */
    private final Map<InetAddress, Routed> routes = new ConcurrentHashMap<>();
    /** Guarded by cmLock. */
    private int nextEphemeral = EPHEMERAL_FIRST;

    private InJvmFabric() {
    }

    private record Known(boolean local, long atNs) {
    }

    private record Routed(InetAddress source, long atNs) {
    }

    /** Whether {@code address} is an address of this host. */
    boolean isLocal(InetAddress address) {
        if (address.isAnyLocalAddress() || address.isLoopbackAddress()) {
            return true;
        }
        long now = System.nanoTime();
        Known k = localAddresses.get(address);
        if (k == null || now - k.atNs() > LOCAL_TTL_NS) {
            boolean local;
            try {
                local = NetworkInterface.getByInetAddress(address) != null;
            } catch (SocketException e) {
                local = false;
            }
            k = new Known(local, now);
            if (localAddresses.size() > 1_024) {
                localAddresses.clear(); // bounded: many destinations looked at once
            }
            localAddresses.put(address, k);
        }
        return k.local();
    }

    /** The addresses of this host's interfaces (of this process's network namespace), now. */
    static List<InetAddress> interfaceAddresses() {
        List<InetAddress> all = new ArrayList<>();
        try {
            Enumeration<NetworkInterface> nis = NetworkInterface.getNetworkInterfaces();
            while (nis != null && nis.hasMoreElements()) {
                NetworkInterface ni = nis.nextElement();
                all.addAll(Collections.list(ni.getInetAddresses()));
            }
        } catch (SocketException e) {
            // none known: nothing to publish
        }
        return all;
    }

    /** Takes a port outside this JVM too. */
    @FunctionalInterface
    interface PortClaim {
        /**
         * Claims {@code port}, which this JVM holds for the caller already.
         *
         * @return false when another process holds it
         * @throws VerbsException when the claim cannot be made at all
         */
        boolean claim(int port) throws VerbsException;
    }

    /**
     * Binds {@code id} to {@code port}, or to an ephemeral port when 0, skipping ports {@code claim}
     * (when not null) finds held elsewhere; returns the port. Holds cmLock.
     */
    int bind(SoftCmId id, int port, PortClaim claim) throws VerbsException {
        if (port == 0) {
            for (int i = 0; i <= EPHEMERAL_LAST - EPHEMERAL_FIRST; i++) {
                int candidate = nextEphemeral;
                nextEphemeral = candidate == EPHEMERAL_LAST ? EPHEMERAL_FIRST : candidate + 1;
                if (bound.putIfAbsent(candidate, id) == null) {
                    if (claimed(id, candidate, claim)) {
                        return candidate;
                    }
                }
            }
            throw new VerbsException(Errno.EADDRINUSE, "no ephemeral RDMA CM port left");
        }
        if (port < 0 || port > 65_535) {
            throw new VerbsException(Errno.EINVAL, "port outside 0..65535: " + port);
        }
        SoftCmId previous = bound.putIfAbsent(port, id);
        if (previous != null) {
            throw new VerbsException(Errno.EADDRINUSE, "RDMA CM port " + port + " is already bound");
        }
        if (!claimed(id, port, claim)) {
            throw new VerbsException(Errno.EADDRINUSE, "RDMA CM port " + port + " is bound by another process");
        }
        return port;
    }

    /** Claims a port this JVM holds for {@code id} outside it too; on failure this JVM lets it go. */
    private boolean claimed(SoftCmId id, int port, PortClaim claim) throws VerbsException {
        if (claim == null) {
            return true;
        }
        boolean ok = false;
        try {
            ok = claim.claim(port);
            return ok;
        } finally {
            if (!ok) {
                bound.remove(port, id);
            }
        }
    }

    /** Releases the port held by {@code id}. Holds cmLock. */
    void unbind(SoftCmId id, int port) {
        bound.remove(port, id);
    }

    /**
     * The id listening at {@code destination}, or null: one listening on its port whose bound address
     * takes a connection addressed there ({@link #accepts}). Holds cmLock.
     */
    SoftCmId listener(InetSocketAddress destination) {
        SoftCmId id = bound.get(destination.getPort());
        return id != null && id.isListening() && accepts(id.boundAddress(), destination.getAddress()) ? id : null;
    }

    /**
     * Whether a listener bound to {@code bound} takes a connection addressed to {@code to}, as a TCP
     * listener does: a specific address only connections to that address; the IPv6 wildcard (a dual-stack
     * socket) any; the IPv4 wildcard any IPv4 address. An IPv4-mapped IPv6 address is its IPv4 address.
     */
    static boolean accepts(InetAddress bound, InetAddress to) {
        InetAddress b = unmapped(bound);
        InetAddress d = unmapped(to);
        if (b.isAnyLocalAddress()) {
            return b instanceof Inet6Address || d instanceof Inet4Address;
        }
        return b.equals(d);
    }

    /** {@code a}, or the IPv4 address an IPv4-mapped IPv6 address stands for. */
    static InetAddress unmapped(InetAddress a) {
        if (a instanceof Inet6Address) {
            try {
                return InetAddress.getByAddress(a.getAddress()); // an IPv4-mapped address comes back as IPv4
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e); // 16 bytes are always an address
            }
        }
        return a;
    }

    /**
     * The source address this host's routing gives a connection to {@code destination}: what the kernel
     * picks for a TCP connect there (for 127.0.0.2 that is 127.0.0.1; for an interface address, that
     * address). A connected UDP socket asks the kernel without sending anything. The wildcard stands for
     * the loopback address, as the JDK connects to it.
     */
    InetAddress sourceFor(InetAddress destination) {
        InetAddress d = destination.isAnyLocalAddress() ? InetAddress.getLoopbackAddress() : destination;
        InetAddress routed = routedSource(d);
        return routed != null ? routed : d; // no answer: the destination itself, an address of this host
    }

    /**
     * The source address routing picks towards {@code destination}, or null when there is no route;
     * what the kernel said is kept for {@link #LOCAL_TTL_NS} (a connect costs no probe then).
     */
    InetAddress routedSource(InetAddress destination) {
        long now = System.nanoTime();
        Routed r = routes.get(destination);
        if (r == null || now - r.atNs() > LOCAL_TTL_NS) {
            InetAddress source;
            try (DatagramChannel probe = DatagramChannel.open(destination instanceof Inet6Address
                ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET)) {
                probe.connect(new InetSocketAddress(destination, 9));
                source = ((InetSocketAddress) probe.getLocalAddress()).getAddress();
            } catch (IOException | UnsupportedOperationException e) {
                source = null;
            }
            r = new Routed(source, now);
            if (routes.size() > 1_024) {
                routes.clear();
            }
            routes.put(destination, r);
        }
        return r.source();
    }
}
