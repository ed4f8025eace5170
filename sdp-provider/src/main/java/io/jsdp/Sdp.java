package io.jsdp;

import io.jsdp.provider.SdpBuffers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.Objects;

/**
 * Memory for zero-copy writes. A blocking write on an SDP channel of a buffer from
 * {@link #allocateDirect} with at least the socket's zero-copy threshold remaining
 * ({@link SdpSocketOptions#ZCOPY_THRESHOLD}, default {@code jsdp.zcopy.threshold}) is not copied: the
 * peer reads it in place by RDMA (SrcAvail / RDMA READ, {@code docs/protocol.md} section 9), even from
 * another process, and {@code write} returns once the peer has read it, so the application may then
 * reuse the buffer at once. Other buffers are copied as before: heap buffers always, other direct
 * buffers because a peer in another process could not reach them. Plain non-blocking writes always
 * copy (they return before the peer could read the buffer); {@link #writeZeroCopy} hands buffers over
 * to a non-blocking channel instead, several in flight, and tells the application when each is free.
 *
 * <p>As a reader, any direct buffer receives zero-copy data without a copy; a heap buffer (or one
 * smaller than 4 KiB) makes the writer finish with buffer copy.
 *
 * <p>{@link FileChannel#transferTo} and {@link FileChannel#transferFrom} with an SDP channel move the
 * bytes through the JDK's own 8 KiB temporary buffers (an SDP channel is not one of the JDK's
 * channels, and a provider cannot change that), so they go by buffer copy in 8 KiB writes;
 * {@link #transferTo} and {@link #transferFrom} here do the same job by zero copy.
 */
public final class Sdp {
    /** Bytes per piece of {@link #transferTo} and {@link #transferFrom} (at least the threshold). */
    static final int TRANSFER_PIECE = 1 << 20;

    private Sdp() {
    }

    /**
     * {@link FileChannel#transferTo}, by zero copy when {@code target} is a blocking SDP channel with
     * zero copy on and {@code count} at least its threshold: the file is read in pieces of at least the
     * threshold (1 MiB, or the threshold when larger) into one buffer from {@link #allocateDirect}, and
     * each piece is written by a blocking write, which the peer reads in place (one copy, the file's
     * read, instead of the JDK's read and the send buffer's copy). Otherwise this is
     * {@code src.transferTo(position, count, target)}. Like it, it leaves {@code src}'s position alone.
     *
     * @param src the file, open for reading
     * @param position where in the file to start
     * @param count the most bytes to transfer
     * @param target the channel to write to
     * @return the bytes transferred (fewer than {@code count} at the end of the file)
     * @throws IllegalArgumentException when {@code position} or {@code count} is negative
     * @throws IOException as {@link FileChannel#transferTo} (the channel's write exceptions)
     */
    public static long transferTo(FileChannel src, long position, long count, WritableByteChannel target)
        throws IOException {
        Objects.requireNonNull(src);
        Objects.requireNonNull(target);
        if (position < 0 || count < 0) {
            throw new IllegalArgumentException("position and count must not be negative: " + position + ", " + count);
        }
        int threshold = zeroCopyThreshold(target);
        if (threshold == 0 || count < threshold) {
            return src.transferTo(position, count, target);
        }
        int piece = (int) Math.min(count, Math.max(TRANSFER_PIECE, threshold));
        ByteBuffer b = allocateDirect(piece);
        try {
            long total = 0;
            while (total < count) {
                b.clear().limit((int) Math.min(piece, count - total));
                int n = src.read(b, position + total);
                if (n <= 0) {
                    break;
                }
                b.flip();
                while (b.hasRemaining()) {
                    target.write(b);
                }
                total += n;
            }
            return total;
        } finally {
            free(b);
        }
    }

    /**
     * {@link FileChannel#transferFrom}, reading a blocking SDP channel in pieces of 1 MiB into one
     * direct buffer, which zero-copy data reaches by RDMA READ (the JDK's 8 KiB pieces would cost a
     * READ and a report each), then writing each piece to the file. Otherwise (another channel, or a
     * non-blocking one) this is {@code dst.transferFrom(src, position, count)}. Like it, it transfers
     * nothing when {@code position} is beyond the file's size and leaves {@code dst}'s position alone.
     *
     * @param src the channel to read from
     * @param dst the file, open for writing
     * @param position where in the file to start
     * @param count the most bytes to transfer
     * @return the bytes transferred (fewer than {@code count} at the end of the stream)
     * @throws IllegalArgumentException when {@code position} or {@code count} is negative
     * @throws IOException as {@link FileChannel#transferFrom} (the channel's read exceptions)
     */
    public static long transferFrom(ReadableByteChannel src, FileChannel dst, long position, long count)
        throws IOException {
        Objects.requireNonNull(src);
        Objects.requireNonNull(dst);
        if (position < 0 || count < 0) {
            throw new IllegalArgumentException("position and count must not be negative: " + position + ", " + count);
        }
        if (!isBlockingSdp(src) || count == 0) {
            return dst.transferFrom(src, position, count);
        }
        if (position > dst.size()) {
            return 0;
        }
        ByteBuffer b = ByteBuffer.allocateDirect((int) Math.min(count, TRANSFER_PIECE));
        long total = 0;
        while (total < count) {
            b.clear().limit((int) Math.min(b.capacity(), count - total));
            int n = src.read(b);
            if (n < 0) {
                break;
            }
            b.flip();
            while (b.hasRemaining()) {
                total += dst.write(b, position + total);
            }
        }
        return total;
    }

    /**
     * Asynchronous zero copy on a non-blocking SDP channel: hands the buffers over to the channel and
     * returns at once. The peer reads them in place by RDMA, several in flight (up to 8, or the peer's
     * {@code max_adverts}); each buffer belongs to the channel until {@code done} runs for it — once
     * per buffer, in order — and the application must not touch it meanwhile (as with
     * {@link java.nio.channels.AsynchronousSocketChannel#write}). After {@code done} no peer reads it.
     *
     * <p>While buffers are handed over the stream stays in order: {@code OP_WRITE} is not ready and a
     * plain {@code write} returns 0 (a blocking one waits). Completions are delivered by whichever
     * thread makes the channel progress: a later {@code write}, {@code read} or {@code writeZeroCopy},
     * or a selection that polls the channel — a selector loop that keeps {@code OP_WRITE} in the key's
     * interest set is woken when the peer has finished, and the {@code done} calls run in its
     * {@code select} before {@code OP_WRITE} is reported ready. If the peer refuses zero copy (it reads
     * into a heap buffer) the rest of the buffer is copied into the send buffer before {@code done}. A
     * close first collects the buffers the peer had finished ({@code done} without failure), then resets
     * the connection if buffers are still advertised (as for a blocking zero-copy write), then runs
     * {@code done} for each buffer not finished with an {@link java.nio.channels.AsynchronousCloseException}.
     * An exception thrown by {@code done} goes to the running thread's uncaught-exception handler and
     * disturbs neither the channel nor a selection ({@link ZeroCopyCompletion}).
     *
     * <p>Buffers must come from {@link #allocateDirect} (device memory, which peers in other processes
     * can read); buffers below the socket's zero-copy threshold, or with zero copy off, are copied into
     * the send buffer as the channel makes progress, and {@code done} follows the copy.
     *
     * @param channel a connected, non-blocking SDP channel of the provider
     * @param srcs the buffers, each from its position to its limit
     * @param done told once per buffer, in order, when the buffer is the application's again
     * @throws IllegalArgumentException when a buffer is not from {@link #allocateDirect}, is given
     *     twice, or is still handed over
     * @throws java.nio.channels.IllegalBlockingModeException when the channel is in blocking mode
     * @throws UnsupportedOperationException when the channel is not the provider's or its connection
     *     fell back to TCP
     * @throws java.nio.channels.NotYetConnectedException when it is not connected
     * @throws java.nio.channels.ClosedChannelException when it is closed or its output is shut
     * @throws IOException when the connection failed
     */
    public static void writeZeroCopy(SocketChannel channel, ByteBuffer[] srcs, ZeroCopyCompletion done) throws IOException {
        Objects.requireNonNull(channel);
        if (!(channel instanceof io.jsdp.provider.SdpSocketChannel c)) {
            throw new UnsupportedOperationException("not an SDP channel of the jsdp provider: " + channel.getClass().getName());
        }
        c.writeZeroCopy(srcs, done);
    }

    /** The zero-copy threshold of a blocking SDP channel; 0 for any other channel or when off. */
    private static int zeroCopyThreshold(Object channel) throws IOException {
        if (!isBlockingSdp(channel)) {
            return 0;
        }
        Integer t = ((SocketChannel) channel).getOption(SdpSocketOptions.ZCOPY_THRESHOLD);
        return t == null ? 0 : t;
    }

    private static boolean isBlockingSdp(Object channel) throws IOException {
        if (!(channel instanceof SocketChannel c) || !c.isBlocking()
            || !c.supportedOptions().contains(SdpSocketOptions.TRANSPORT)) {
            return false;
        }
        String transport = c.getOption(SdpSocketOptions.TRANSPORT);
        return transport != null && transport.startsWith("sdp");
    }

    /**
     * Allocates a direct buffer in the SDP device's memory, which peers can read by RDMA. Use the buffer
     * itself: a slice or duplicate of it is copied like any other direct buffer. When no SDP device is
     * available this is {@link ByteBuffer#allocateDirect}.
     *
     * @param capacity the size in bytes
     * @return a direct buffer, position 0, limit {@code capacity}; it lives until {@link #free} or the
     *     JVM's end (the garbage collector does not reclaim device memory)
     * @throws IllegalArgumentException when {@code capacity} is not positive
     * @throws OutOfMemoryError when the device has no memory to give
     */
    public static ByteBuffer allocateDirect(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        return SdpBuffers.allocate(capacity);
    }

    /**
     * Gives a buffer from {@link #allocateDirect} back to the device. Cached registrations of it are
     * dropped; a transfer still reading it (a write another thread blocks in) keeps the memory until
     * it ends. Do not use the buffer afterwards.
     *
     * @param buffer the buffer
     * @return true when it was SDP device memory and is freed; false for any other buffer (left alone)
     */
    public static boolean free(ByteBuffer buffer) {
        return SdpBuffers.free(buffer);
    }
}
