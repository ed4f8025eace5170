package io.jsdp.flow;

/**
 * The ways a peer can break the SDP protocol. Each aborts the connection with an FFDC record whose
 * kind is {@code "protocol." + name()}; none ever affects another connection.
 */
public enum Violation {
    /** A receive completion shorter than the 16-byte BSDH. */
    SHORT_MESSAGE("message shorter than the BSDH"),
    /** The BSDH's {@code len} disagrees with the bytes the completion delivered. */
    LENGTH_MISMATCH("BSDH len disagrees with the received length"),
    /** A message id the specification does not define. */
    UNKNOWN_MID("unknown message id"),
    /** A defined message id this connection does not support (zero copy, mode changes …). */
    UNSUPPORTED_MID("unsupported message id"),
    /** A Data or control message before the Hello/HelloAck exchange finished. */
    DATA_BEFORE_HELLO("message before Hello/HelloAck"),
    /** A second Hello or HelloAck, or one sent by the wrong side. */
    SECOND_HELLO("second or misdirected Hello/HelloAck"),
    /** A Hello or HelloAck with a bad version, buffer size or advertisement count. */
    BAD_HELLO("bad Hello/HelloAck"),
    /** {@code mseq} is not the previous message's plus one. */
    MSEQ_OUT_OF_ORDER("mseq out of order"),
    /** {@code mseq_ack} acknowledges a message never sent, or goes backwards. */
    ACK_OUT_OF_RANGE("mseq_ack out of range"),
    /** {@code bufs} larger than any receive queue this implementation accepts. */
    BUFS_OUT_OF_RANGE("bufs out of range"),
    /** A message the sender had no credit for (data needs two, the last is for credit updates). */
    NO_CREDIT("message without credit"),
    /** A Data message with payload after the peer's DisConn, or a second DisConn. */
    DATA_AFTER_DISCONN("message after DisConn"),
    /** A DisConn or AbortConn with payload bytes (they carry none). */
    PAYLOAD_ON_CONTROL("payload on a message that carries none"),
    /** Hello/HelloAck capability bits that are unknown, more than one scheme, or not what was offered. */
    BAD_CAPABILITIES("bad capability bits"),
    /** A packetized ring advertisement (Hello/HelloAck) whose size is out of range. */
    BAD_RING("bad ring advertisement"),
    /** A RingData that does not start at the ring's next free byte (written elsewhere in or outside the ring). */
    RING_OUT_OF_ORDER("ring write not at the ring's next free byte"),
    /** A RingData longer than the ring's free bytes (or empty). */
    RING_OVERRUN("ring write beyond the free space"),
    /** A consumed count that goes back or returns more space than was written. */
    RING_ACK_OUT_OF_RANGE("ring space returned that was never consumed"),
    /** The peer's ring advertisement does not work: our RDMA WRITE into it failed (bad rkey or address). */
    BAD_RKEY("RDMA WRITE into the peer's advertised ring failed"),
    /**
     * A SrcAvail our RDMA READ could not read (remote access error: bad rkey, address or length), or
     * whose inline payload exceeds the bytes it advertises.
     */
    BAD_SRC_AVAIL("SrcAvail with a bad rkey, address or length"),
    /** RdmaRdCompl reports more bytes than the SrcAvail advertised (or no SrcAvail is outstanding). */
    RD_COMPL_OVERRUN("RdmaRdCompl for more than was advertised"),
    /** More zero-copy advertisements outstanding than the {@code max_adverts} we announced. */
    TOO_MANY_ADVERTS("more advertisements than max_adverts"),
    /**
     * A SinkAvail of size 0, shorter or longer than its header, counting stream messages never sent
     * ({@code non_disc}), or whose RDMA WRITE the device refuses (remote access error: bad rkey or address).
     */
    BAD_SINK_AVAIL("SinkAvail with a bad size, non_disc, rkey or address"),
    /** RdmaWrCompl with no SinkAvail outstanding, for 0 bytes, or for more than was advertised. */
    WR_COMPL_OVERRUN("RdmaWrCompl for no, zero or more than the advertised bytes"),
    /** SinkCancelAck with no SinkAvailCancel outstanding. */
    CANCEL_ACK_WITHOUT_CANCEL("SinkCancelAck without SinkAvailCancel");

    private final String description;

    Violation(String description) {
        this.description = description;
    }

    /**
     * A short description.
     *
     * @return e.g. "mseq out of order"
     */
    public String description() {
        return description;
    }
}
