/* log.c -- a session's messages, through the caller's callback, gated by level (log.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/session.h"

void sess_logf(const jma_session *s, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!s->opt.log || level > s->opt.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	s->opt.log(s->opt.log_arg, level, msg);
}
