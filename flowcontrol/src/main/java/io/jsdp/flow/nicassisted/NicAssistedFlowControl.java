package io.jsdp.flow.nicassisted;

import io.jsdp.flow.FlowControl;
import io.jsdp.flow.FlowControlScheme;
import io.jsdp.flow.Violation;
import io.jsdp.flow.credit.CreditAccountedFlowControl;
import io.jsdp.flow.credit.CreditFlowControl;

/**
 * NIC-assisted flow control (seed 001 §4.3): software flow control for what it does well — coalescing
 * and segmentation — with InfiniBand's message-level flow control underneath, so data moves while the
 * application computes.
 *
 * <p><b>Virtual window</b> (§4.3.1). {@code W} is the payload of one receive buffer: the sender never
 * posts a message larger than {@code W} (the engine's segmentation), and the receiver posts — advertises
 * to the device — a receive buffer only when a whole {@code W} of its socket buffer is free (a buffer is
 * reposted only after the application read all of its message). So a message the device delivers
 * always fits; nothing is ever overrun.
 *
 * <p><b>Asynchronous interrupt</b> (§4.3.2). While the peer has credits this is the credit-based
 * scheme. Beyond them, the engine's send buffer has two parts: the first {@link #deviceMessages()}
 * messages are handed to the device as soon as they are copied (the device-handled part) and the device
 * sends each when the peer posts a buffer — the queue pair's receiver-not-ready retry is set to
 * "forever" — without any thread of this side; the rest (the software-handled part) is coalesced into
 * {@code W}-sized messages. Each device message's send completion is the "interrupt": the stack's
 * progress thread, woken by it, hands the coalesced messages to the device.
 *
 * <p>The credit accounting stays (every message carries {@code bufs} and {@code mseq_ack}), but a peer
 * message beyond the peer's credits is legal: its device held it until our buffer was posted. For the
 * same reason the peer never "starves": credit updates go only when half the buffers are unknown to it
 * (not one per reposted buffer, which cost a message per data message).
 *
 * <p>Single-threaded: the engine calls it under the connection lock.
 */
public final class NicAssistedFlowControl extends CreditAccountedFlowControl {
    private final int deviceMessages;

    /**
     * NIC-assisted flow control.
     *
     * @param deviceMessages the device-handled part: data messages posted beyond the credits (at least 1)
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
    public boolean holdsPartialMessages() {
        return true;
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
        return credit.describe() + " deviceMessages=" + deviceMessages;
    }
}
