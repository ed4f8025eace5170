package io.jsdp.verbs;

/**
 * Memory-region access flags, with the values of {@code enum ibv_access_flags}. Local read is always
 * allowed; remote write needs local write ({@code ibv_reg_mr} rejects it otherwise).
 */
public final class Access {
    /** The device may write into the region for receives and RDMA READ sinks. */
    public static final int LOCAL_WRITE = 1;
    /** Peers may RDMA WRITE into the region. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** Peers may RDMA READ from the region. */
    public static final int REMOTE_READ = 1 << 2;
    /** Peers may run atomics on the region. */
    public static final int REMOTE_ATOMIC = 1 << 3;
    /** Every flag this port knows. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private Access() {
    }

    /**
     * Checks a set of flags as {@code ibv_reg_mr} does.
     *
     * @param access the requested flags
     * @return {@link Errno#OK}, or {@link Errno#EINVAL} for unknown bits or remote write/atomic
     *     without local write
     */
    public static int validate(int access) {
        if ((access & ~ALL) != 0) {
            return Errno.EINVAL;
        }
        if ((access & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (access & LOCAL_WRITE) == 0) {
            return Errno.EINVAL;
        }
        return Errno.OK;
    }

    /**
     * Renders flags for traces and messages.
     *
     * @param access the flags
     * @return e.g. {@code "LOCAL_WRITE|REMOTE_READ"}, or {@code "NONE"}
     */
    public static String toString(int access) {
        if (access == 0) {
            return "NONE";
        }
        StringBuilder sb = new StringBuilder();
        if ((access & LOCAL_WRITE) != 0) {
            sb.append("LOCAL_WRITE|");
        }
        if ((access & REMOTE_WRITE) != 0) {
            sb.append("REMOTE_WRITE|");
        }
        if ((access & REMOTE_READ) != 0) {
            sb.append("REMOTE_READ|");
        }
        if ((access & REMOTE_ATOMIC) != 0) {
            sb.append("REMOTE_ATOMIC|");
        }
        if ((access & ~ALL) != 0) {
            sb.append("0x").append(Integer.toHexString(access & ~ALL)).append('|');
        }
        return sb.substring(0, sb.length() - 1);
    }
}
