package io.jsdp.testbed.disni;

import io.jsdp.verbs.VerbsException;
import java.io.IOException;

/** The failures libdisni's JNI code throws: {@code IOException("<call>: <strerror(errno)>\n")}. */
final class Strerror {
    private Strerror() {
    }

    /** glibc's {@code strerror} text for the errno values the port uses. */
    static String of(int errno) {
        switch (Math.abs(errno)) {
            case 2: return "No such file or directory";
            case 5: return "Input/output error";
            case 12: return "Cannot allocate memory";
            case 16: return "Device or resource busy";
            case 19: return "No such device";
            case 22: return "Invalid argument";
            case 75: return "Value too large for defined data type";
            case 95: return "Operation not supported";
            case 98: return "Address already in use";
            case 99: return "Cannot assign requested address";
            case 110: return "Connection timed out";
            case 111: return "Connection refused";
            case 113: return "No route to host";
            default: return "Unknown error " + Math.abs(errno);
        }
    }

    /** The exception libdisni throws when {@code call} fails with {@code errno}. */
    static IOException failure(String call, int errno) {
        return new IOException(call + ": " + of(errno) + "\n");
    }

    /** The exception libdisni throws when {@code call} fails the way the device's exception says. */
    static IOException failure(String call, VerbsException cause) {
        IOException e = failure(call, cause.errno());
        e.initCause(cause);
        return e;
    }
}
