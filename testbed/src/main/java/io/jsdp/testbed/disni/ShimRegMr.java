package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.SVCRegMr;
import io.jsdp.verbs.MemoryRegion;
import io.jsdp.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code ibv_reg_mr} of a buffer, as a stateful verb call: every {@link #execute()} registers
 * {@code [0, capacity)} of the buffer anew (position and limit ignored) and {@link #getMr()} is the latest.
 */
final class ShimRegMr extends SVCRegMr {
    private static final AtomicInteger HANDLES = new AtomicInteger(1);

    private final ShimPd pd;
    private final ByteBuffer buffer;
    private final int access;
    private IbvMr mr;
    private boolean valid = true;

    ShimRegMr(ShimPd pd, ByteBuffer buffer, int access) {
        this.pd = pd;
        this.buffer = buffer;
        this.access = access;
    }

    @Override
    public SVCRegMr execute() throws IOException {
        if (!pd.isOpen()) {
            throw new IOException("Trying to register memory with closed PD");
        }
        if (!buffer.isDirect()) {
            // libdisni takes the address with a cast to sun.nio.ch.DirectBuffer
            throw new ClassCastException("a heap buffer has no address: " + buffer);
        }
        MemoryRegion soft;
        try {
            soft = pd.soft.register(buffer, access);
        } catch (VerbsException e) {
            throw Strerror.failure("j2c::regMr: ibv_reg_mr failed", e);
        }
        mr = new ShimMr(soft, HANDLES.getAndIncrement());
        return this;
    }

    @Override
    public IbvMr getMr() {
        return mr;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public SVCRegMr free() {
        valid = false;
        return this;
    }
}
