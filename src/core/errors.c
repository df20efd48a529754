/* errors.c -- a session's last error: its message and kind, recorded by jma_fail (errors.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/session.h"

int jma_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	s->kind = kind;
	jma_logf(s, JMA_LOG_DEBUG, "error: %s", s->err);
	return err < 0 ? err : -err;
}

enum jma_errkind jma_kind_of(int err)
{
	switch (err) {
	case -ETIMEDOUT:
	case -EINTR:
		return JMA_ERR_UNSAFE;
	case -EPERM:
	case -EBUSY:
		return JMA_ERR_ATTACH;
	default:
		return JMA_ERR_TARGET;
	}
}

const char *jma_errmsg(const jma_session *s)
{
	return s->err;
}

enum jma_errkind jma_errkind(const jma_session *s)
{
	return s->kind;
}
