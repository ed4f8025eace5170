package io.jsdp.provider;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketImplFactory;

/**
 * The JVM-wide {@code java.net} hooks: {@link Socket#setSocketImplFactory} and
 * {@link ServerSocket#setSocketFactory}, so that plain {@code new Socket(...)} and
 * {@code new ServerSocket(...)} run on {@link SdpSocketImpl} ({@code java-nio-provider.md} §3.1–3.2).
 * Both must be installed together: a jsdp server impl can only accept into a jsdp client impl.
 *
 * <p>Each factory can be set once per JVM. {@link #install()} sets the client factory first, so a
 * refusal there leaves the JVM untouched; when only the server factory was taken, client sockets are
 * jsdp's and server sockets stay the JDK's (which still works: a JDK server socket accepts into JDK
 * impls), and {@link #install()} says so.
 */
public final class SocketFactories {
    private SocketFactories() {
    }

    /** Makes the impls of {@code java.net.Socket}s. */
    public static final class ClientFactory implements SocketImplFactory {
        /** A factory. */
        public ClientFactory() {
        }

        @Override
        public SocketImpl createSocketImpl() {
            return new SdpSocketImpl(false);
        }
    }

    /** Makes the impls of {@code java.net.ServerSocket}s. */
    public static final class ServerFactory implements SocketImplFactory {
        /** A factory. */
        public ServerFactory() {
        }

        @Override
        public SocketImpl createSocketImpl() {
            return new SdpSocketImpl(true);
        }
    }

    /**
     * Installs both factories.
     *
     * @throws SocketException naming the factory that was already set: nothing was installed when it
     *     is the client one; when it is the server one, the client factory is installed and server
     *     sockets stay on the JDK
     * @throws IOException when the JDK refuses for another reason
     */
    @SuppressWarnings("deprecation") // the factories are deprecated since 17, not for removal; the only hook there is
    public static synchronized void install() throws IOException {
        try {
            Socket.setSocketImplFactory(new ClientFactory());
        } catch (SocketException alreadySet) {
            SocketException e = new SocketException("jsdp: refused: a java.net.Socket SocketImplFactory is already installed "
                + "in this JVM; nothing was changed");
            e.initCause(alreadySet);
            throw e;
        }
        try {
            ServerSocket.setSocketFactory(new ServerFactory());
        } catch (SocketException alreadySet) {
            SocketException e = new SocketException("jsdp: a java.net.ServerSocket factory is already installed in this JVM: "
                + "client sockets use jsdp, server sockets stay on the JDK's TCP");
            e.initCause(alreadySet);
            throw e;
        }
    }
}
