package io.jsdp.flow.engine.rogue;

import io.jsdp.flow.FlowControlScheme;

/** Every case of {@link RoguePeerViolationTest} with the engine (and the healthy connection) asking for packetized flow control. */
class PacketizedRoguePeerViolationTest extends RoguePeerViolationTest {
    @Override
    FlowControlScheme scheme() {
        return FlowControlScheme.PACKETIZED;
    }
}
