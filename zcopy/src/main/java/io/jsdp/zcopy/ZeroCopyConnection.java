package io.jsdp.zcopy;

import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;

/**
 * One connection's zero copy: the source role ({@link SrcAvailSender}) and the sink role
 * ({@link SrcAvailReceiver}) of SrcAvail; when both sides offered SinkAvail, its sink role
 * ({@link SinkAvailReader}) and source role ({@link SinkAvailWriter}) too, else null.
 */
final class ZeroCopyConnection implements LargeTransfers {
    private final SrcAvailSender source;
    private final SrcAvailReceiver sink;
    private final SinkAvailReader sinkReader;
    private final SinkAvailWriter sinkWriter;

    ZeroCopyConnection(ZeroCopy zc, LargeTransfers.Port port) {
        this.source = new SrcAvailSender(zc, port);
        this.sink = new SrcAvailReceiver(zc, port);
        boolean sinkAvail = port.sinkAvailNegotiated();
        this.sinkReader = sinkAvail ? new SinkAvailReader(zc, port) : null;
        this.sinkWriter = sinkAvail ? new SinkAvailWriter(zc, port, zc.maxAdverts()) : null;
    }

    @Override
    public int write(ByteBuffer src) {
        int total = 0;
        if (sinkWriter != null) {
            if (sinkWriter.busy()) {
                total = sinkWriter.write(src);
                if (sinkWriter.busy() || !src.hasRemaining()) {
                    return total;
                }
            }
            // the peer's reader waits with its buffer advertised: write straight into it (SinkAvail)
            if (!source.hasUnsettled() && sinkWriter.start(src)) {
                return total;
            }
        }
        return total + source.write(src);
    }

    @Override
    public boolean hasUnsettled() {
        return source.hasUnsettled() || sinkWriter != null && sinkWriter.busy();
    }

    @Override
    public boolean holdsOutput() {
        return source.holdsOutput() || sinkWriter != null && sinkWriter.holdsOutput();
    }

    @Override
    public long spinHintNs(boolean write, long nowNs) {
        return write ? source.spinHintNs(nowNs) : sink.spinHintNs(nowNs);
    }

    @Override
    public boolean hasPendingOutput() {
        return source.hasPendingOutput() || sink.hasPendingOutput()
            || sinkReader != null && (sinkReader.hasPendingOutput() || sinkWriter.hasPendingOutput());
    }

    @Override
    public boolean hasUndeliveredOutput() {
        return source.hasPendingOutput() || source.holdsOutput() || sink.hasPendingOutput()
            || sinkReader != null && (sinkReader.hasPendingOutput() || sinkWriter.hasUndeliveredOutput());
    }

    @Override
    public void transmit() {
        sink.transmit(); // reports free the peer's writer: first
        if (sinkReader != null) {
            sinkReader.transmit();
            sinkWriter.transmit();
        }
        source.transmit();
    }

    @Override
    public int takeWritten(ByteBuffer dst) {
        return sinkReader == null ? 0 : sinkReader.take(dst);
    }

    @Override
    public int writtenBytes() {
        return sinkReader == null ? 0 : sinkReader.writtenBytes();
    }

    @Override
    public void advertiseSink(ByteBuffer dst) {
        if (sinkReader != null && !sink.remoteLeft()) {
            sinkReader.advertise(dst);
        }
    }

    @Override
    public int withdrawSink(ByteBuffer dst) {
        return sinkReader == null ? 0 : sinkReader.withdraw(dst);
    }

    @Override
    public boolean sinkBufferOut() {
        return sinkReader != null && sinkReader.bufferOut();
    }

    @Override
    public boolean peerBufferAdvertised() {
        return sinkWriter != null && sinkWriter.usable();
    }

    @Override
    public void onSinkAvail(long size, int rkey, long addr, int nonDisc) {
        if (sinkWriter == null) {
            throw new IllegalStateException("SinkAvail not negotiated");
        }
        sinkWriter.onSinkAvail(size, rkey, addr, nonDisc);
    }

    @Override
    public void onStreamMessage(boolean sent) {
        if (sinkReader == null) {
            return;
        }
        if (sent) {
            sinkWriter.onStreamMessageSent();
        } else {
            sinkReader.onStreamMessage();
        }
    }

    @Override
    public void onPeerOutputEnded() {
        if (sinkReader != null) {
            sinkReader.onPeerOutputEnded();
        }
    }

    @Override
    public boolean onSrcAvail(int mseq, long len, int inlineBytes, int rkey, long vaddr, boolean inputShut, int mseqAck) {
        return sink.onSrcAvail(mseq, len, inlineBytes, rkey, vaddr, inputShut, mseqAck);
    }

    @Override
    public long settle(ByteBuffer[] srcs, int offset, int length) {
        long total = 0;
        if (sinkWriter != null && sinkWriter.done()) {
            for (int i = offset; i < offset + length; i++) {
                if (srcs[i].hasRemaining()) {
                    total = sinkWriter.write(srcs[i]); // the completed WRITE took the first one's bytes
                    break;
                }
            }
        }
        return total + source.settle(srcs, offset, length);
    }

    @Override
    public boolean startAdvert() {
        return sink.startAdvert();
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
        if (sinkWriter != null && (sinkWriter.busy() || sinkWriter.usable() && !source.hasUnsettled())) {
            for (int i = offset; i < offset + length; i++) {
                if (srcs[i].hasRemaining()) {
                    return write(srcs[i]); // the peer's advertised buffer takes the first one
                }
            }
            return 0;
        }
        return source.write(srcs, offset, length);
    }

    @Override
    public void onControl(int mid, long size, int mseqAck) {
        switch (mid) {
            case MessageId.RDMA_RD_COMPL -> source.onReadCompletion(size, mseqAck);
            case MessageId.SEND_SM -> source.onSendSm(mseqAck);
            case MessageId.SRC_AVAIL_CANCEL -> sink.onCancel();
            case MessageId.RDMA_WR_COMPL -> sinkReader.onWriteCompletion(size);
            case MessageId.SINK_AVAIL_CANCEL -> sinkWriter.onCancel();
            case MessageId.SINK_CANCEL_ACK -> sinkReader.onCancelAck();
            default -> throw new IllegalArgumentException("not a zero-copy control message: " + MessageId.name(mid));
        }
    }

    @Override
    public int readRemote(ByteBuffer dst) {
        return sink.readRemote(dst);
    }

    @Override
    public boolean remoteLeft() {
        return sink.remoteLeft();
    }

    @Override
    public long remoteBytes() {
        return sink.remoteBytes();
    }

    @Override
    public void discardIncoming() {
        sink.discardIncoming();
        if (sinkReader != null) {
            sinkReader.discardIncoming();
        }
    }

    @Override
    public boolean onCompletion(long tag, WorkCompletion wc) {
        if (sinkWriter != null && (tag & SinkAvailWriter.WRITE_TAG) != 0) {
            return sinkWriter.onCompletion(tag, wc);
        }
        return sink.onCompletion(tag, wc);
    }

    @Override
    public void release() {
        source.release();
        sink.release();
        if (sinkReader != null) {
            sinkReader.release();
            sinkWriter.release();
        }
    }

    @Override
    public String describe() {
        return "zcopy " + source.describe() + "; " + sink.describe()
            + (sinkReader == null ? "" : "; " + sinkReader.describe() + "; " + sinkWriter.describe());
    }

    @Override
    public long transfers() {
        return source.transfers() + (sinkWriter == null ? 0 : sinkWriter.transfers());
    }

    @Override
    public long rdmaBytes() {
        return source.rdmaBytes() + sink.rdmaBytes() + (sinkReader == null ? 0 : sinkReader.rdmaBytes() + sinkWriter.rdmaBytes());
    }
}
