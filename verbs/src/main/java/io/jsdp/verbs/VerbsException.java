package io.jsdp.verbs;

import java.io.IOException;

/**
 * A verbs call failed. Carries the {@link Errno} code so callers can tell "busy" from "invalid"
 * without parsing messages.
 */
public final class VerbsException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The errno value, always positive. */
    private final int errno;

    /**
     * Creates an exception for a failed call.
     *
     * @param errno the {@link Errno} code (sign ignored)
     * @param message what failed, naming the object and the reason
     */
    public VerbsException(int errno, String message) {
        super(message + " (" + Errno.name(errno) + ")");
        this.errno = Math.abs(errno);
    }

    /**
     * The errno value of the failure.
     *
     * @return a positive {@link Errno} code
     */
    public int errno() {
        return errno;
    }

    /**
     * Turns the status code of a post call into an exception, for callers at the edge that prefer
     * exceptions to codes.
     *
     * @param rc the code returned by {@link QueuePair#postSend} or {@link QueuePair#postRecv}
     * @param operation what was called, for the message
     * @throws VerbsException when {@code rc} is not {@link Errno#OK}
     */
    public static void check(int rc, String operation) throws VerbsException {
        if (rc != Errno.OK) {
            throw new VerbsException(rc, operation + " failed");
        }
    }

    /**
     * Turns the result of {@link CompletionQueue#poll} into an exception when it is an error code.
     *
     * @param polled the count or negative code returned by a poll
     * @param operation what was polled, for the message
     * @return {@code polled} when it is a count
     * @throws VerbsException when {@code polled} is negative
     */
    public static int checkPoll(int polled, String operation) throws VerbsException {
        if (polled < 0) {
            throw new VerbsException(polled, operation + " failed");
        }
        return polled;
    }
}
