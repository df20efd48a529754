/* log.h -- a session's messages, through the log callback of its options. */
#ifndef JMA_CORE_LOG_H
#define JMA_CORE_LOG_H

#include <jemattach/session.h>

/* Format and pass on when a callback is set and @level is within its
 * log_level (enum jma_loglevel); at most 1023 bytes. */
void sess_logf(const jma_session *s, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
