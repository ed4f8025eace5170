package io.jsdp.flow.engine;

import io.jsdp.flow.Violation;
import io.jsdp.verbs.ProtectionDomain;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;

/**
 * The engine's seat for zero-copy transfers (module {@code zcopy}, which depends on this one and not
 * the other way round). The engine keeps the byte stream, the sequence numbers, credits and the
 * queue pair; a {@code LargeTransfers} decides which writes leave the buffer-copy path and runs the
 * SrcAvail / RDMA READ / RdmaRdCompl exchange through the {@link Port} the engine gives it
 * ({@code docs/protocol.md} section 9).
 *
 * <p>Where the engine consults it:
 * <ul>
 * <li>{@link SdpConnection#write(ByteBuffer, int)} with {@link SdpConnection#HOLDS_BUFFER}: a direct
 * buffer with at least the connection's zero-copy threshold remaining goes to {@link #write}; while
 * {@link #holdsOutput()} no other byte may be queued (stream order) and {@code OP_WRITE} is not
 * ready.</li>
 * <li>Receiving: a SrcAvail's inline bytes join the stream like Data, followed by a <em>remote
 * part</em> that {@link #readRemote} moves into the reader's buffer; RdmaRdCompl, SendSm and
 * SrcAvailCancel go to {@link #onControl}.</li>
 * <li>SinkAvail (when both sides offered {@link #CAPABILITY_SINK_AVAIL}): a blocking reader
 * ({@link SdpConnection#read(ByteBuffer, int)} with {@link SdpConnection#HOLDS_BUFFER}) that finds nothing
 * goes to {@link #advertiseSink}, and to {@link #takeWritten} before it reads anything else; a reader
 * that leaves goes to {@link #withdrawSink}; a blocking write of a direct buffer goes to {@link #write}
 * while {@link #peerBufferAdvertised()}; the engine reports every stream message it posts or receives
 * ({@link #onStreamMessage}), the peer's SinkAvail ({@link #onSinkAvail}) and DisConn
 * ({@link #onPeerOutputEnded}).</li>
 * <li>{@link #transmit()} runs whenever the engine sends; completions of the work requests posted
 * through the port go to {@link #onCompletion}.</li>
 * </ul>
 * Every method is called with the connection's lock held, from whichever thread holds it;
 * implementations keep per-connection state only and allocate nothing on the data path.
 */
public interface LargeTransfers {
    /** Hello capability bit: the side implements SrcAvail / RDMA READ zero copy (section 9). */
    int CAPABILITY_ZCOPY = 1 << 8;
    /**
     * Hello capability bit: the side implements SinkAvail / RDMA WRITE zero copy (section 9), offered
     * only with {@link #CAPABILITY_ZCOPY}; a peer without it never receives SinkAvail.
     */
    int CAPABILITY_SINK_AVAIL = 1 << 9;

    /** {@link #readRemote} status: an RDMA READ into the buffer is in flight; call again once it completed. */
    int IN_PROGRESS = -100;
    /** {@link #readRemote} / {@link #write} status: the connection failed meanwhile. */
    int FAILED = -101;

    /** Creates the per-connection part; one per stack. */
    interface Factory extends AutoCloseable {
        /**
         * The capability bits this side offers in its Hello or accepts in its HelloAck.
         *
         * @return e.g. {@link #CAPABILITY_ZCOPY}
         */
        int capabilities();

        /**
         * The SrcAvail advertisements this side accepts outstanding as a sink: its Hello's or
         * HelloAck's {@code max_adverts}.
         *
         * @return at least 1
         */
        int maxAdverts();

        /**
         * Starts zero copy on a connection whose handshake negotiated it.
         *
         * @param port the connection's services
         * @return the connection's part
         */
        LargeTransfers open(Port port);

        /** Frees what the factory holds (registrations, device memory); after every connection released. */
        @Override
        void close();
    }

    /** What the engine offers the zero-copy code. Every call needs the connection's lock. */
    interface Port {
        /**
         * The connection's id, for traces and FFDC records.
         *
         * @return the id
         */
        long connectionId();

        /**
         * The connection's settings.
         *
         * @return the options (do not modify)
         */
        SdpOptions options();

        /**
         * The protection domain of the queue pair, for registrations.
         *
         * @return the domain
         */
        ProtectionDomain protectionDomain();

        /**
         * Whether every byte written before now is on the wire (no open or waiting send slot), so an
         * advertisement would follow them in order.
         *
         * @return true when drained
         */
        boolean outputDrained();

        /**
         * The most inline bytes a SrcAvail may carry: the largest message the peer takes, less the BSDH
         * and the SrcAH.
         *
         * @return bytes
         */
        int maxSrcAvailInline();

        /**
         * Posts a SrcAvail in a send slot: BSDH, SrcAH, then {@code inlineBytes} of {@code src} from its
         * position (the position does not move).
         *
         * @param src the advertised buffer
         * @param inlineBytes bytes carried inline
         * @param len bytes advertised, inline ones included
         * @param rkey the buffer's remote key
         * @param vaddr the device address of the byte at {@code src}'s position
         * @return the SrcAvail's mseq, or -1 when no slot or credit is free now (try again at the next
         *     {@link #transmit()}); the connection may have failed (see {@link #failed()})
         */
        int postSrcAvail(ByteBuffer src, int inlineBytes, int len, int rkey, long vaddr);

        /**
         * Posts a control message of zero copy (RdmaRdCompl, SendSm, SrcAvailCancel) when credits
         * allow.
         *
         * @param mid the message id
         * @param size the RRCH/RWCH size for RdmaRdCompl/RdmaWrCompl; ignored for the others
         * @return the message's mseq, or -1 when it could not go now
         */
        int postControl(int mid, int size);

        /**
         * The advertisements the peer accepts outstanding (its Hello's or HelloAck's {@code max_adverts}).
         *
         * @return at least 1
         */
        int peerMaxAdverts();

        /**
         * Posts a signaled RDMA READ.
         *
         * @param tag returned in {@link #onCompletion}, 0 … 2^32
         * @param localAddress device address of the destination
         * @param lkey its local key
         * @param len bytes
         * @param remoteAddress the peer's address
         * @param rkey the peer's key
         * @return true when posted; false when the post failed (the connection has failed)
         */
        boolean postRdmaRead(long tag, long localAddress, int lkey, int len, long remoteAddress, int rkey);

        /**
         * Whether the handshake negotiated SinkAvail ({@link #CAPABILITY_SINK_AVAIL}): only then may this
         * side send SinkAvail, and the peer's SinkAvail, RdmaWrCompl, SinkAvailCancel and SinkCancelAck
         * reach {@link LargeTransfers}.
         *
         * @return true when both sides offered it
         */
        default boolean sinkAvailNegotiated() {
            return false;
        }

        /**
         * Posts a SinkAvail (BSDH, SinkAH) when credits allow.
         *
         * @param size bytes advertised
         * @param rkey the sink buffer's remote key (REMOTE_WRITE)
         * @param addr the device address of its first byte
         * @param nonDisc stream messages received so far
         * @return the message's mseq, or -1 when it could not go now
         */
        default int postSinkAvail(int size, int rkey, long addr, int nonDisc) {
            return -1;
        }

        /**
         * Posts a signaled RDMA WRITE into the peer's advertised buffer and, right behind it on the queue
         * pair, its RdmaWrCompl of {@code len} bytes: both, or — when credits or a control slot lack —
         * neither.
         *
         * @param tag returned in {@link #onCompletion}, 0 … 2^34
         * @param localAddress device address of the source bytes
         * @param lkey their local key
         * @param len bytes, at least 1
         * @param remoteAddress the peer's address
         * @param rkey the peer's key
         * @return the RdmaWrCompl's mseq, or -1 when nothing could go now (or the connection failed)
         */
        default int postRdmaWrite(long tag, long localAddress, int lkey, int len, long remoteAddress, int rkey) {
            return -1;
        }

        /**
         * The mseq of the last message received from the peer.
         *
         * @return the mseq
         */
        int lastReceivedMseq();

        /**
         * Aborts the connection for a protocol violation, with an FFDC record {@code protocol.<v>}.
         *
         * @param v the violation
         * @param detail what was wrong
         */
        void violation(Violation v, String detail);

        /**
         * Aborts the connection (AbortConn to the peer) with an FFDC record of {@code kind}.
         *
         * @param kind the FFDC kind, e.g. {@code "zcopy.CANCEL_TIMEOUT"}
         * @param detail what happened
         */
        void fail(String kind, String detail);

        /**
         * Whether the connection failed or was released.
         *
         * @return true once failed
         */
        boolean failed();

        /**
         * Runs {@code task} after {@code delayNs} on the stack's timer, with the connection's lock held,
         * unless the connection was released.
         *
         * @param task what to run
         * @param delayNs the delay
         * @return the handle to cancel it
         */
        ScheduledFuture<?> schedule(Runnable task, long delayNs);
    }

    /**
     * A blocking writer's direct buffer at or above the threshold (or any write while
     * {@link #holdsOutput()}): start or continue its zero-copy transfer. The writer calls again with
     * the same buffer until it is consumed and does not touch it meanwhile; the buffer's position
     * advances only by bytes the peer is done with.
     *
     * @param src the buffer
     * @return bytes finished (position advanced; 0 while the transfer runs); when {@link #holdsOutput()}
     *     is false afterwards the engine may copy what remains
     */
    int write(ByteBuffer src);

    /**
     * A blocking writer's gathering write: as {@link #write} for a run of buffers, several advertised
     * at once (up to the peer's {@code max_adverts}); positions advance, in order, over the buffers the
     * peer is done with.
     *
     * @param srcs the buffers
     * @param offset the first
     * @param length how many
     * @return bytes finished; when {@link #holdsOutput()} is false afterwards the engine may copy
     *     what remains
     */
    long write(ByteBuffer[] srcs, int offset, int length);

    /**
     * Only the first half of {@link #write(ByteBuffer[], int, int)}: positions advance over what the
     * peer is done with (acknowledged advertisements, completed WRITEs), and nothing new is started.
     * The application closes with buffers handed over: what the peer has must not be reported as lost.
     *
     * @param srcs the buffers, as given to the write
     * @param offset the first
     * @param length how many
     * @return bytes finished
     */
    default long settle(ByteBuffer[] srcs, int offset, int length) {
        return 0;
    }

    /**
     * The reader reached a SrcAvail's inline bytes (before the first is read).
     *
     * @return true when the advertisement was discarded — the source will send its bytes again by
     *     buffer copy after a refusal of an earlier one — so the engine skips its inline bytes and
     *     remote part
     */
    boolean startAdvert();

    /**
     * Whether a transfer owns the output: nothing else may be sent before it ends.
     *
     * @return true while an advertisement is queued or outstanding
     */
    boolean holdsOutput();

    /**
     * How much longer than the spin window ({@link SdpOptions#spinNs()}) a blocked caller should keep
     * polling before it parks: a writer whose transfers the peer is expected to finish soon ({@link
     * #holdsOutput()}), or a reader with nothing to read whose peer is expected to advertise again soon,
     * judged by how long that took recently. A park and the wake-up after it cost tens of microseconds
     * on a virtual machine, as much as the peer's read of a MiB. The engine polls this long yielding the
     * CPU ({@link Thread#yield()}), and not at all when the spin window is 0.
     *
     * @param write the caller waits to write (else to read)
     * @param nowNs {@link System#nanoTime()} now
     * @return nanoseconds, 0 for none
     */
    default long spinHintNs(boolean write, long nowNs) {
        return 0;
    }

    /**
     * Whether a transfer has not been settled with its writer yet (outstanding, or finished and its
     * bytes not yet counted): every write must go to {@link #write} until it is, whatever the threshold
     * says now, or the buffer-copy path would send those bytes a second time.
     *
     * @return true while transfers are in the books
     */
    boolean hasUnsettled();

    /**
     * Whether control messages or an advertisement wait for credits: the engine keeps its completion
     * queue armed for the next completion.
     *
     * @return true when {@link #transmit()} has something to send
     */
    boolean hasPendingOutput();

    /**
     * Whether output of ours has still to reach the peer: a message or advertisement waiting for
     * credits, an advertised buffer the peer has not read yet, an RDMA WRITE not completed, an answer
     * owed. Unlike {@link #hasPendingOutput()}, which also stays true to keep the queue armed for what
     * the peer may do, this is false on an idle connection: the exit drain waits for it.
     *
     * @return true while something of ours is not delivered
     */
    boolean hasUndeliveredOutput();

    /** Sends what may go now; the engine calls it after its own Data went. */
    void transmit();

    /**
     * A SrcAvail arrived (sequence and credit already checked).
     *
     * @param mseq its mseq
     * @param len bytes advertised
     * @param inlineBytes bytes inline
     * @param rkey the remote key
     * @param vaddr the device address
     * @param inputShut whether this side's input is shut (refuse it: the data is dropped)
     * @param mseqAck its mseq_ack (a SrcAvail sent before the source saw our SendSm is discarded)
     * @return true when the engine queues the inline bytes followed by the remote part; false when it
     *     refused or discarded it (the engine drops its inline bytes) or raised a violation (check
     *     {@link Port#failed()})
     */
    boolean onSrcAvail(int mseq, long len, int inlineBytes, int rkey, long vaddr, boolean inputShut, int mseqAck);

    /**
     * RdmaRdCompl, SendSm or SrcAvailCancel arrived — or, with SinkAvail negotiated, RdmaWrCompl,
     * SinkAvailCancel or SinkCancelAck.
     *
     * @param mid the message id
     * @param size the RRCH/RWCH size (RdmaRdCompl, RdmaWrCompl), else 0
     * @param mseqAck the message's mseq_ack (stale messages are ignored)
     */
    void onControl(int mid, long size, int mseqAck);

    /**
     * The reader reached the remote part of the oldest SrcAvail: move bytes into {@code dst} (RDMA READ),
     * or refuse (SendSm) when {@code dst} is a heap buffer or small.
     *
     * @param dst the reader's buffer
     * @return bytes read (position advanced), {@link #IN_PROGRESS} or {@link #FAILED}
     */
    int readRemote(ByteBuffer dst);

    /**
     * Whether the remote part at the head still has bytes to read.
     *
     * @return false once read, refused or cancelled
     */
    boolean remoteLeft();

    /**
     * Bytes of remote parts not read yet, for {@code available()}.
     *
     * @return the count
     */
    long remoteBytes();

    /** Input shut or unread data discarded: refuse every advertisement not read yet. */
    void discardIncoming();

    /**
     * A completion of a work request posted through the port.
     *
     * @param tag the tag it was posted with
     * @param wc the completion (valid during the call only)
     * @return false when the engine should handle a failed completion as any of its own (a transport
     *     error: the peer is gone or the queue pair failed); true when handled (success, or a
     *     violation raised)
     */
    boolean onCompletion(long tag, WorkCompletion wc);

    /**
     * SinkAvail (sink role): bytes the peer RDMA-wrote into the reader's advertised buffer and retired
     * with RdmaWrCompl; they come before anything queued since. Called before the buffer-copy path
     * reads.
     *
     * @param dst the reader's buffer (the advertised one, or any: the bytes are copied then)
     * @return bytes moved into {@code dst} (position advanced), or 0
     */
    default int takeWritten(ByteBuffer dst) {
        return 0;
    }

    /**
     * Bytes the peer RDMA-wrote that the reader has not taken yet ({@link #takeWritten}).
     *
     * @return the count
     */
    default int writtenBytes() {
        return 0;
    }

    /**
     * SinkAvail (sink role): a blocking reader (it calls again with the same buffer until the read
     * returns) found nothing to read: advertise its buffer when it qualifies (device memory with at
     * least the threshold remaining, nothing advertised yet).
     *
     * @param dst the reader's buffer
     */
    default void advertiseSink(ByteBuffer dst) {
    }

    /**
     * SinkAvail (sink role): the reader leaves (timeout): withdraw its buffer.
     *
     * @param dst the reader's buffer
     * @return bytes written into it meanwhile (taken as by {@link #takeWritten}), 0 when the peer may no
     *     longer write the buffer, or {@link #IN_PROGRESS} while SinkAvailCancel waits for its answer
     */
    default int withdrawSink(ByteBuffer dst) {
        return 0;
    }

    /**
     * Whether the peer may still write a buffer of the reader (advertised, or its cancel unanswered).
     *
     * @return true while the reader must not leave
     */
    default boolean sinkBufferOut() {
        return false;
    }

    /**
     * SinkAvail (source role): whether the peer advertised a buffer the next blocking write of a direct
     * buffer can RDMA-write into.
     *
     * @return true when one is pending
     */
    default boolean peerBufferAdvertised() {
        return false;
    }

    /**
     * A SinkAvail arrived (sequence and credit already checked; the SinkAH is complete).
     *
     * @param size bytes advertised
     * @param rkey the remote key
     * @param addr the device address
     * @param nonDisc the stream messages the peer had received
     */
    default void onSinkAvail(long size, int rkey, long addr, int nonDisc) {
        throw new IllegalStateException("SinkAvail not negotiated");
    }

    /**
     * A stream message (Data with payload, or SrcAvail) was posted ({@code sent}) or received: both sides
     * count them for SinkAvail's {@code non_disc} and to void advertisements that crossed them.
     *
     * @param sent true for ours, false for the peer's
     */
    default void onStreamMessage(boolean sent) {
    }

    /** The peer's DisConn arrived: it writes nothing more, so no advertised buffer of ours will be written. */
    default void onPeerOutputEnded() {
    }

    /** The connection released its queue pair: drop registrations and timers. */
    void release();

    /**
     * One line for snapshots.
     *
     * @return e.g. "zcopy src=ADVERTISED 4096/1048576 sink adverts=0"
     */
    String describe();

    /**
     * Zero-copy transfers finished (source side: SrcAvail advertisements fully read by the peer, and
     * RDMA WRITEs into the peer's SinkAvail buffers).
     *
     * @return the count
     */
    long transfers();

    /**
     * Bytes moved by RDMA (read by us as a sink, or read by the peer from us as a source; written by us
     * into the peer's advertised buffers, or by the peer into ours).
     *
     * @return the count
     */
    long rdmaBytes();
}
