package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import io.jsdp.verbs.CompletionChannel;
import java.io.IOException;

/** A completion-channel handle; libdisni reports no usable fd to Java (0). */
final class ShimCompChannel extends IbvCompChannel {
    final CompletionChannel soft;

    ShimCompChannel(IbvContext context, CompletionChannel soft) throws IOException {
        super(0, context);
        this.soft = soft;
    }
}
