package io.jsdp.testbed;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock of one queue-pair side: nearly always uncontended (the owner posts, the agent and a peer's
 * RNR kick come rarely), so it is a CAS to take and a release store to give back — no fence on
 * release, unlike {@code ReentrantLock}, whose volatile release costs a full fence on every post. Under
 * contention it spins briefly, then parks in short naps: it never holds a monitor, so a virtual thread
 * waiting for it unmounts. Not reentrant; the queue pair never re-enters a side it holds.
 */
final class QpLock {
    private static final VarHandle STATE;
    private static final int SPINS = 2_000;
    private static final long NAP_NS = 2_000;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(QpLock.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    void lock() {
        if (!STATE.compareAndSet(this, 0, 1)) {
            lockContended();
        }
    }

    private void lockContended() {
        int spins = 0;
        while (!STATE.compareAndSet(this, 0, 1)) {
            if (++spins < SPINS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(NAP_NS);
            }
        }
    }

    /** Takes the lock if it is free, without waiting. */
    boolean tryLock() {
        return (int) STATE.getOpaque(this) == 0 && STATE.compareAndSet(this, 0, 1);
    }

    void unlock() {
        STATE.setRelease(this, 0);
    }
}
