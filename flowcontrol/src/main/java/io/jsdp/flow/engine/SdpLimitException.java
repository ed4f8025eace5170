package io.jsdp.flow.engine;

import java.io.IOException;

/**
 * An SDP connect refused before it allocated anything, because its stack holds as many connections, or
 * as many connections in set-up, as its {@link ConnectionLimits} allow. The connection can still be made
 * over TCP, which is what the provider does (counted as a fallback).
 */
public final class SdpLimitException extends IOException {
    private static final long serialVersionUID = 1L;

    SdpLimitException(String message) {
        super(message);
    }
}
