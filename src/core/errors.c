/* errors.c -- a session's last error: its message, kind and hints, recorded by sess_fail (errors.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/session.h"

static int record(jma_session *s, unsigned hints, enum jma_errkind kind, int err,
		  const char *fmt, va_list ap)
{
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	s->kind = kind;
	s->hints = hints;
	sess_logf(s, JMA_LOG_DEBUG, "error: %s", s->err);
	return err < 0 ? err : -err;
}

int sess_fail(jma_session *s, enum jma_errkind kind, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = record(s, 0, kind, err, fmt, ap);
	va_end(ap);
	return err;
}

int sess_fail_hint(jma_session *s, unsigned hints, enum jma_errkind kind, int err,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = record(s, hints, kind, err, fmt, ap);
	va_end(ap);
	return err;
}

void sess_add_hints(jma_session *s, unsigned hints)
{
	s->hints |= hints;
}

enum jma_errkind sess_kind_of(int err)
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

unsigned jma_errhints(const jma_session *s)
{
	return s->hints;
}
