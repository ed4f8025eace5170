package io.jsdp.zcopy;

import io.jsdp.flow.engine.LargeTransfers;
import io.jsdp.flow.wire.MessageId;
import io.jsdp.verbs.WorkCompletion;
import java.nio.ByteBuffer;

/** One connection's zero copy: the source role ({@link SrcAvailSender}) and the sink role ({@link SrcAvailReceiver}). */
final class ZeroCopyConnection implements LargeTransfers {
    private final SrcAvailSender source;
    private final SrcAvailReceiver sink;

    ZeroCopyConnection(ZeroCopy zc, LargeTransfers.Port port) {
        this.source = new SrcAvailSender(zc, port);
        this.sink = new SrcAvailReceiver(zc, port);
    }

    @Override
    public int write(ByteBuffer src) {
        return source.write(src);
    }

    @Override
    public boolean hasUnsettled() {
        return source.hasUnsettled();
    }

    @Override
    public boolean holdsOutput() {
        return source.holdsOutput();
    }

    @Override
    public long spinHintNs(boolean write, long nowNs) {
        return write ? source.spinHintNs(nowNs) : sink.spinHintNs(nowNs);
    }

    @Override
    public boolean hasPendingOutput() {
        return source.hasPendingOutput() || sink.hasPendingOutput();
    }

    @Override
    public void transmit() {
        sink.transmit(); // reports free the peer's writer: first
        source.transmit();
    }

    @Override
    public boolean onSrcAvail(int mseq, long len, int inlineBytes, int rkey, long vaddr, boolean inputShut, int mseqAck) {
        return sink.onSrcAvail(mseq, len, inlineBytes, rkey, vaddr, inputShut, mseqAck);
    }

    @Override
    public boolean startAdvert() {
        return sink.startAdvert();
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
        return source.write(srcs, offset, length);
    }

    @Override
    public void onControl(int mid, long size, int mseqAck) {
        switch (mid) {
            case MessageId.RDMA_RD_COMPL -> source.onReadCompletion(size, mseqAck);
            case MessageId.SEND_SM -> source.onSendSm(mseqAck);
            case MessageId.SRC_AVAIL_CANCEL -> sink.onCancel();
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
    }

    @Override
    public boolean onCompletion(long tag, WorkCompletion wc) {
        return sink.onCompletion(tag, wc);
    }

    @Override
    public void release() {
        source.release();
        sink.release();
    }

    @Override
    public String describe() {
        return "zcopy " + source.describe() + "; " + sink.describe();
    }

    @Override
    public long transfers() {
        return source.transfers();
    }

    @Override
    public long rdmaBytes() {
        return source.rdmaBytes() + sink.rdmaBytes();
    }
}
