package io.jsdp.testbed;

import io.jsdp.verbs.Errno;
import io.jsdp.verbs.VerbsException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The in-JVM fabric: the "network" joining every SoftRdma device of this JVM. It holds the
 * connection manager's port space (bound ids by port) and the lock that serialises connection
 * state changes on both ends of a connection.
 *
 * <p>An address is on the fabric when it is an address of this host (loopback, wildcard or an
 * interface address); ports are one space for all of them, as if every id bound the wildcard. Ids of
 * host-fabric devices also claim their bound ports host-wide ({@link PortClaim}, {@link HostCm}), so a
 * port is free for them only when it is free in this JVM and in every other live process.
 */
final class InJvmFabric {
    static final InJvmFabric INSTANCE = new InJvmFabric();
    private static final int EPHEMERAL_FIRST = 49_152;
    private static final int EPHEMERAL_LAST = 65_535;

    /** Serialises connection-manager state changes on both ids of a connection. Taken before queue-pair locks. */
    final ReentrantLock cmLock = new ReentrantLock();
    /** Bound ids by port; guarded by cmLock for changes. */
    private final Map<Integer, SoftCmId> bound = new ConcurrentHashMap<>();
    private final Map<InetAddress, Boolean> localAddresses = new ConcurrentHashMap<>();
    /** Guarded by cmLock. */
    private int nextEphemeral = EPHEMERAL_FIRST;

    private InJvmFabric() {
    }

    /** Whether {@code address} is an address of this host. */
    boolean isLocal(InetAddress address) {
        if (address.isAnyLocalAddress() || address.isLoopbackAddress()) {
            return true;
        }
        return localAddresses.computeIfAbsent(address, a -> {
            try {
                return NetworkInterface.getByInetAddress(a) != null;
            } catch (SocketException e) {
                return false;
            }
        });
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

    /** The id listening at {@code destination}, or null. */
    SoftCmId listener(InetSocketAddress destination) {
        return listener(destination.getPort());
    }

    /** The id listening on {@code port}, or null. */
    SoftCmId listener(int port) {
        SoftCmId id = bound.get(port);
        return id != null && id.isListening() ? id : null;
    }
}
