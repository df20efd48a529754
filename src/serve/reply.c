/* reply.c -- error replies: a status from what failed, and a message safe to print. */
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

/* Bytes a target chose (its comm, thread names in a message) may reach a
 * reader's terminal: control bytes become '?'. */
static void printable(char *s)
{
	for (unsigned char *p = (unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
}

void reply_error(struct reply *r, int status, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printable(buf);
	if (r->blob)
		blob_put(r->blob);
	else
		free(r->body);
	r->blob = NULL;
	r->body = NULL;
	n = asprintf(&r->body, "jemattach: %s\n", buf);
	r->len = n > 0 ? (size_t)n : 0;
	if (n < 0)
		r->body = NULL;
	r->status = status;
	r->type = "text/plain; charset=utf-8";
	r->filename = NULL;
}

int reply_status(const struct op_result *res)
{
	if (res->kind == OP_ERR_BUDGET)
		return MHD_HTTP_TOO_MANY_REQUESTS;
	if (res->rc == -ETIMEDOUT)
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	switch (res->kind) {
	case JMA_ERR_MISSING:
		return MHD_HTTP_CONFLICT;
	case JMA_ERR_UNSAFE:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	case JMA_ERR_ATTACH:
		return MHD_HTTP_BAD_GATEWAY;
	case JMA_ERR_USAGE:
		return MHD_HTTP_BAD_REQUEST;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

void reply_failed(struct reply *r, const struct target *t, const char *what,
		  const struct op_result *res)
{
	reply_error(r, reply_status(res), "process %d (%s): %s: %s", (int)t->pid, t->comm, what,
		    res->msg[0] ? res->msg : strerror(-res->rc));
	if (r->status == MHD_HTTP_SERVICE_UNAVAILABLE)
		r->retry_after = 1;
	if (res->retry_at > 0)
		r->retry_after = (int)ceil(res->retry_at - jma_clock_s(CLOCK_MONOTONIC)) > 1 ?
				 (int)ceil(res->retry_at - jma_clock_s(CLOCK_MONOTONIC)) : 1;
}
