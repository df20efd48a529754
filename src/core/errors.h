/* errors.h -- recording a session's error: 0 or -errno returned, the message
 * and its kind (the exit code) kept on the handle (include/jemattach.h). */
#ifndef JMA_CORE_ERRORS_H
#define JMA_CORE_ERRORS_H

#include <jemattach/session.h>

/* Record an error: returns -|err| so callers write `return sess_fail(...)`.
 * Its hints (jma_errhints) are none. */
int sess_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with @hints, JMA_HINT_*: what the caller could change.  The
 * message says what happened and why, in no program's words (no option). */
int sess_fail_hint(jma_session *s, unsigned hints, enum jma_errkind kind, int err,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Add @hints to the error recorded last (one recorded by a lower layer). */
void sess_add_hints(jma_session *s, unsigned hints);
/* The kind an engine error falls into (timeouts are JMA_ERR_UNSAFE, ...). */
enum jma_errkind sess_kind_of(int err);

#endif
