package io.jsdp.testbed.disni;

import com.ibm.disni.verbs.RdmaEventChannel;
import io.jsdp.verbs.CmEventChannel;
import io.jsdp.verbs.CmId;
import java.io.IOException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A CM event-channel handle. Like libdisni's, it maps the ids created on it (and the ids connect requests
 * bring) so that an event names the handles the application holds.
 */
final class ShimEventChannel extends RdmaEventChannel {
    final CmEventChannel soft;
    /** The handle of each SoftRdma id of this channel. */
    final Map<CmId, ShimCmId> ids = Collections.synchronizedMap(new IdentityHashMap<>());

    ShimEventChannel(CmEventChannel soft) throws IOException {
        super(0);
        this.soft = soft;
    }
}
