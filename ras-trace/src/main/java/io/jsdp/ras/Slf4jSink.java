package io.jsdp.ras;

import org.slf4j.Logger;

/**
 * Trace levels onto slf4j levels: 1 error, 2..3 info, 4..6 debug, 7..9 trace. The unnamed levels
 * 3 and 6 take the slf4j level of the named level below them.
 */
final class Slf4jSink implements TraceSink {
    private final Logger logger;

    Slf4jSink(Logger logger) {
        this.logger = logger;
    }

    @Override
    public boolean isEnabled(int level) {
        if (level <= TraceLevel.ERROR) {
            return logger.isErrorEnabled();
        } else if (level < TraceLevel.ENTRY_EXIT) {
            return logger.isInfoEnabled();
        } else if (level < TraceLevel.HOT_ENTRY_EXIT) {
            return logger.isDebugEnabled();
        }
        return logger.isTraceEnabled();
    }

    @Override
    public void emit(int level, String message, Throwable cause) {
        if (level <= TraceLevel.ERROR) {
            logger.error(message, cause);
        } else if (level < TraceLevel.ENTRY_EXIT) {
            logger.info(message, cause);
        } else if (level < TraceLevel.HOT_ENTRY_EXIT) {
            logger.debug(message, cause);
        } else {
            logger.trace(message, cause);
        }
    }
}
