package io.jsdp.testbed;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Why a queue pair's send queue is stalled, on a cache line of its own: the peer's posting thread reads
 * it on every receive it posts, and the requester must not make that read miss by writing neighbouring
 * fields. Written by the requester (under its send lock) only when the value changes, except for the
 * RNR mark, whose volatile store is half of the kick handshake (see {@link ReceiveRing}).
 */
final class Stall extends StallFields {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(StallValue.class, "value", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    int get() {
        return (int) VALUE.getVolatile(this);
    }

    /** Stores {@code v} if it differs (a plain read first: no store, no miss for the reader, when equal). */
    void set(int v) {
        if ((int) VALUE.getOpaque(this) != v) {
            VALUE.setVolatile(this, v);
        }
    }

    /** Stores {@code v} with a full fence, always: a Dekker store that a load must follow. */
    void setFenced(int v) {
        VALUE.setVolatile(this, v);
    }
}

/** Padding before the value. */
abstract class StallPad0 {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

/** The value. */
abstract class StallValue extends StallPad0 {
    volatile int value;
}

/** Padding after the value. */
abstract class StallFields extends StallValue {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}
