package io.jsdp.verbs;

/** Send work-request flags, with the values of {@code enum ibv_send_flags}. */
public final class SendFlags {
    /** Wait for earlier RDMA READs of this queue pair to complete before executing this request. */
    public static final int FENCE = 1;
    /** Generate a completion on success too (errors always complete). */
    public static final int SIGNALED = 1 << 1;
    /** The receive completion at the peer is solicited: it wakes a peer armed for solicited events. */
    public static final int SOLICITED = 1 << 2;
    /** Copy the payload into the work request at post time; lkeys are ignored. */
    public static final int INLINE = 1 << 3;
    /** Every flag this port knows. */
    public static final int ALL = FENCE | SIGNALED | SOLICITED | INLINE;

    private SendFlags() {
    }
}
