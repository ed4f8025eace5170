package io.jsdp.flow.nicassisted;

import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.credit.CreditFlowControl;
import io.jsdp.flow.packetized.PacketizedFlowControl;

/**
 * NIC-assisted flow control (seed 001 §4.3): it extends packetized flow control — software manages the
 * receiver's buffer as one byte ring, coalescing and segmenting — with InfiniBand's message-level flow
 * control for what finds no room in the ring, so data moves while the application computes.
 *
 * <p><b>While the peer's ring has room</b> this is packetized flow control: each write is RDMA-written
 * at the ring's next free byte and announced by RingData, so a 1 KiB write takes 1 KiB of the peer's
 * socket buffer, not a receive buffer (the thesis: "the first 64 messages are sent", §4.4).
 *
 * <p><b>Virtual window</b> (§4.3.1). {@code W} is the payload of one receive buffer. Beyond the ring,
 * the sender posts Data messages of at most {@code W} bytes (the engine's segmentation), and the
 * receiver posts — advertises to the device — a receive buffer only when a whole {@code W} of its
 * socket buffer is free: a buffer holding such a message is reposted only after the application read
 * all of it. So a message the device delivers always fits; nothing is ever overrun.
 *
 * <p><b>Asynchronous interrupt</b> (§4.3.2). When the ring is full, the bytes waiting in the send buffer
 * have two parts: the first {@link #deviceMessages()} messages are handed to the device at once (the
 * device-handled part), and the device sends each when the peer posts a buffer — the queue pair's
 * receiver-not-ready retry is set to "forever" — without any thread of this side; the rest (the
 * software-handled part) is coalesced into {@code W}-sized messages. Each device message's send
 * completion is the "interrupt": the stack's progress thread, woken by it, hands the coalesced bytes
 * to the device, or writes them into the ring when the peer returned ring space meanwhile.
 *
 * <p>The credit accounting stays (every message carries {@code bufs} and {@code mseq_ack}), but a peer
 * message beyond the peer's credits is legal: its device held it until our buffer was posted. For the
 * same reason the peer never "starves": credit updates go only when half the buffers are unknown to it.
 *
 * <p>Single-threaded: the engine calls it under the connection lock.
 */
public final class NicAssistedFlowControl extends PacketizedFlowControl {
    private final int deviceMessages;

    /**
     * NIC-assisted flow control; the ring sizes come with the handshake.
     *
     * @param deviceMessages the device-handled part: data messages posted beyond the ring and the
     *     credits (at least 1)
     */
    public NicAssistedFlowControl(int deviceMessages) {
        super(new CreditFlowControl(false));
        if (deviceMessages < 1) {
            throw new IllegalArgumentException("deviceMessages must be >= 1: " + deviceMessages);
        }
        this.deviceMessages = deviceMessages;
    }

    @Override
    public FlowControlScheme scheme() {
        return FlowControlScheme.NIC;
    }

    @Override
    public int deviceMessages() {
        return deviceMessages;
    }

    @Override
    public boolean movesDataWithoutApplication() {
        return true;
    }

    @Override
    public String describe() {
        return super.describe() + " deviceMessages=" + deviceMessages;
    }
}
