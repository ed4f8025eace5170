package io.jsdp.verbs;

/**
 * Status codes of the port, with the Linux errno values that verbs and librdmacm use, so a code
 * read in a trace means the same thing on every device.
 *
 * <p>Posting and polling are hot paths: they return these codes instead of throwing (0 = success;
 * posts return the positive code, {@link CompletionQueue#poll} a negative one). Slow-path calls throw
 * {@link VerbsException}, which carries the same code.
 */
public final class Errno {
    /** Success. */
    public static final int OK = 0;
    /** No such file or entry: an unknown key or address. */
    public static final int ENOENT = 2;
    /** Input/output error: the device failed. */
    public static final int EIO = 5;
    /** Out of memory: a work queue is full ({@code ibv_post_send} returns it). */
    public static final int ENOMEM = 12;
    /** Resource busy: destroying an object still in use (a CQ with queue pairs, a PD with MRs). */
    public static final int EBUSY = 16;
    /** Invalid argument or state: a post before RTS, too many SGEs, inline data too long. */
    public static final int EINVAL = 22;
    /** Value too large: a completion queue overflowed. */
    public static final int EOVERFLOW = 75;
    /** Operation not supported by this device (atomics, for example). */
    public static final int EOPNOTSUPP = 95;
    /** Address already in use: a listener already holds the port. */
    public static final int EADDRINUSE = 98;
    /** Address not available: not an address of this host. */
    public static final int EADDRNOTAVAIL = 99;
    /** Connection timed out. */
    public static final int ETIMEDOUT = 110;
    /** Connection refused: no listener at the destination. */
    public static final int ECONNREFUSED = 111;
    /** No route to host. */
    public static final int EHOSTUNREACH = 113;

    private Errno() {
    }

    /**
     * Names a code for messages and traces.
     *
     * @param code an errno value, positive or negative
     * @return its symbolic name, e.g. {@code "EINVAL"}, or {@code "errno <n>"} when unknown
     */
    public static String name(int code) {
        switch (Math.abs(code)) {
            case OK: return "OK";
            case ENOENT: return "ENOENT";
            case EIO: return "EIO";
            case ENOMEM: return "ENOMEM";
            case EBUSY: return "EBUSY";
            case EINVAL: return "EINVAL";
            case EOVERFLOW: return "EOVERFLOW";
            case EOPNOTSUPP: return "EOPNOTSUPP";
            case EADDRINUSE: return "EADDRINUSE";
            case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
            case ETIMEDOUT: return "ETIMEDOUT";
            case ECONNREFUSED: return "ECONNREFUSED";
            case EHOSTUNREACH: return "EHOSTUNREACH";
            default: return "errno " + code;
        }
    }
}
