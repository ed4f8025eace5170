package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import io.jsdp.verbs.CompletionQueue;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** A completion-queue handle; as with libdisni, {@code cqe} stays 0. */
final class ShimCq extends IbvCQ {
    private static final AtomicInteger HANDLES = new AtomicInteger(1);

    final CompletionQueue soft;

    ShimCq(IbvContext context, IbvCompChannel channel, CompletionQueue soft) throws IOException {
        super(context, channel, HANDLES.getAndIncrement());
        this.soft = soft;
    }
}
