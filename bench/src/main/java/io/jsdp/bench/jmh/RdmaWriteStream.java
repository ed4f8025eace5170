package io.jsdp.bench.jmh;

import io.jsdp.verbs.Access;
import io.jsdp.verbs.DeviceMemory;
import io.jsdp.verbs.Errno;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.Opcode;
import io.jsdp.verbs.RdmaDevice;
import io.jsdp.verbs.SendFlags;
import io.jsdp.verbs.SendWorkRequest;
import io.jsdp.verbs.VerbsException;
import io.jsdp.verbs.WcStatus;
import io.jsdp.verbs.WorkCompletion;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.function.BooleanSupplier;

/**
 * The active side of the RDMA WRITE stream: posts {@code messageBytes} RDMA WRITEs from one registered
 * source buffer (device memory) into the passive side's target region, slot after slot as in a ring,
 * with at most {@link #WINDOW} writes outstanding and every {@link #SIGNAL_EVERY}th signaled. The
 * passive side only lends its memory: it learns the address and key from nothing but the accept's
 * private data, and does no work while the stream runs.
 *
 * <p>The accept's private data ({@link #encodeTarget}), big-endian:
 * <pre>
 *   0               8          12         16
 *   +---------------+----------+----------+
 *   | address (8)   | rkey (4) | bytes (4)|
 *   +---------------+----------+----------+
 * </pre>
 *
 * <p>After a run, {@link #verify} asks the passive side (one SEND, {@link #VERIFY_REQUEST_BYTES}:
 * messages written (8), message size (4)) to compare every slot written with the source pattern; it
 * answers with one SEND holding the count of mismatching bytes (8).
 */
final class RdmaWriteStream implements AutoCloseable {
    /** Most writes outstanding; below the send queue depth, which also carries the verify SEND. */
    static final int WINDOW = 32;
    /** Every this many writes one is signaled; its completion retires it and all before it. */
    static final int SIGNAL_EVERY = 8;
    /** Bytes of the accept's private data. */
    static final int TARGET_BYTES = 16;
    /** Bytes of a verify request. */
    static final int VERIFY_REQUEST_BYTES = 12;
    /** Bytes of a verify answer. */
    static final int VERIFY_ANSWER_BYTES = 8;
    /** Control messages (the verify exchange) fit in this. */
    static final int CONTROL_BYTES = 64;

    private final VerbsPair pair;
    private final DeviceMemory source;
    private final MemoryRegion sourceMr;
    private final int messageBytes;
    private final long remoteAddress;
    private final int rkey;
    private final int slots;
    private final SendWorkRequest write = new SendWorkRequest(1);
    private final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
        new WorkCompletion()};
    /** Writes posted; wr ids are 1, 2, ... */
    private long posted;
    /** Every write up to this wr id has completed. */
    private long completed;

    private RdmaWriteStream(VerbsPair pair, DeviceMemory source, MemoryRegion sourceMr, int messageBytes,
        ByteBuffer target) {
        this.pair = pair;
        this.source = source;
        this.sourceMr = sourceMr;
        this.messageBytes = messageBytes;
        this.remoteAddress = target.getLong(0);
        this.rkey = target.getInt(8);
        this.slots = target.getInt(12) / messageBytes;
        if (slots < 1) {
            throw new IllegalStateException("target of " + target.getInt(12) + " B is smaller than a message");
        }
    }

    /**
     * Connects to a passive side listening at {@code destination} and prepares the source buffer.
     *
     * @param device the device
     * @param destination the passive side's listener
     * @param messageBytes the size of each write
     * @return the stream
     * @throws IOException when the connection fails or the accept carries no target
     * @throws InterruptedException when interrupted while connecting
     */
    static RdmaWriteStream connect(RdmaDevice device, InetSocketAddress destination, int messageBytes)
        throws IOException, InterruptedException {
        VerbsPair pair = VerbsPair.connect(device, destination, CONTROL_BYTES);
        DeviceMemory source = null;
        MemoryRegion mr = null;
        try {
            byte[] target = pair.peerPrivateData();
            if (target.length < TARGET_BYTES) {
                throw new IllegalStateException("the accept carried " + target.length + " B of private data, not the "
                    + TARGET_BYTES + " B target description");
            }
            source = device.allocateMemory(messageBytes);
            fillPattern(source.buffer(), messageBytes);
            mr = pair.pd.register(source.buffer(), Access.LOCAL_WRITE);
            return new RdmaWriteStream(pair, source, mr, messageBytes, ByteBuffer.wrap(target));
        } catch (IOException | RuntimeException e) {
            if (mr != null) {
                mr.close();
            }
            if (source != null) {
                source.close();
            }
            pair.close();
            throw e;
        }
    }

    /**
     * The accept's private data describing a target region.
     *
     * @param mr the region, registered with {@link Access#REMOTE_WRITE}
     * @return {@link #TARGET_BYTES} bytes
     */
    static byte[] encodeTarget(MemoryRegion mr) {
        return ByteBuffer.allocate(TARGET_BYTES).putLong(mr.address()).putInt(mr.rkey()).putInt(mr.length()).array();
    }

    /** Byte {@code i} of every message. */
    static byte patternByte(int i) {
        return (byte) (i * 31 + 7);
    }

    private static void fillPattern(ByteBuffer b, int bytes) {
        for (int i = 0; i < bytes; i++) {
            b.put(i, patternByte(i));
        }
    }

    /**
     * Posts one write into the next slot, first waiting for a completion when the window is full.
     *
     * @param peerAlive asked now and then while waiting
     * @return false when the peer went away while the window was full
     */
    boolean write(BooleanSupplier peerAlive) {
        if (posted - completed >= WINDOW && !awaitCompletion(peerAlive)) {
            return false;
        }
        post((posted + 1) % SIGNAL_EVERY == 0);
        return true;
    }

    private void post(boolean signaled) {
        long wrId = ++posted;
        long slot = (wrId - 1) % slots;
        write.wrId(wrId).opcode(Opcode.RDMA_WRITE).flags(signaled ? SendFlags.SIGNALED : 0)
            .remote(remoteAddress + slot * messageBytes, rkey).sge(0, sourceMr.address(), messageBytes, sourceMr.lkey());
        int rc = pair.qp.postSend(write);
        if (rc != Errno.OK) {
            throw new IllegalStateException("RDMA WRITE post failed: " + Errno.name(rc));
        }
    }

    private boolean awaitCompletion(BooleanSupplier peerAlive) {
        int n;
        int spins = 0;
        while ((n = pair.sendCq.poll(wc, wc.length)) == 0) {
            Thread.onSpinWait();
            if ((++spins & 0xffff) == 0 && !peerAlive.getAsBoolean()) {
                return false;
            }
        }
        if (n < 0) {
            throw new IllegalStateException("poll failed: " + Errno.name(n));
        }
        for (int i = 0; i < n; i++) {
            if (wc[i].status() != WcStatus.SUCCESS) {
                throw new IllegalStateException("RDMA WRITE failed: " + wc[i]);
            }
            completed = Math.max(completed, wc[i].wrId());
        }
        return true;
    }

    /**
     * Waits until every posted write has completed (posting one signaled write more when the last
     * posted was unsignaled).
     *
     * @param peerAlive asked now and then while waiting
     * @return false when the peer went away first
     */
    boolean drain(BooleanSupplier peerAlive) {
        if (posted > completed && posted % SIGNAL_EVERY != 0) {
            post(true);
        }
        while (completed < posted) {
            if (!awaitCompletion(peerAlive)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Drains, then has the passive side compare what it holds with what was written.
     *
     * @param peerAlive asked now and then while waiting
     * @return the number of mismatching bytes the peer counted (0: all arrived)
     * @throws IllegalStateException when the peer went away first
     */
    long verify(BooleanSupplier peerAlive) {
        if (!drain(peerAlive)) {
            throw new IllegalStateException("peer gone while draining the RDMA WRITEs");
        }
        pair.sendBuffer().putLong(0, posted).putInt(8, messageBytes);
        pair.send(VERIFY_REQUEST_BYTES);
        if (!pair.awaitRecv(peerAlive)) {
            throw new IllegalStateException("peer gone before answering the verify request");
        }
        long mismatches = pair.recvBuffer().getLong(0);
        pair.postRecv(CONTROL_BYTES);
        return mismatches;
    }

    /**
     * Passive side: counts bytes of the written slots that differ from the pattern.
     *
     * @param target the target region's memory
     * @param request a verify request
     * @return mismatching bytes
     */
    static long countMismatches(ByteBuffer target, ByteBuffer request) {
        long written = request.getLong(0);
        int bytes = request.getInt(8);
        int slots = target.capacity() / bytes;
        long used = Math.min(written, slots);
        long mismatches = 0;
        for (int s = 0; s < used; s++) {
            for (int i = 0; i < bytes; i++) {
                if (target.get(s * bytes + i) != patternByte(i)) {
                    mismatches++;
                }
            }
        }
        return mismatches;
    }

    /**
     * Writes posted so far.
     *
     * @return the count
     */
    long posted() {
        return posted;
    }

    @Override
    public void close() throws VerbsException {
        sourceMr.close();
        source.close();
        pair.close();
    }
}
