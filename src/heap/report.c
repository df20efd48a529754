/* report.c -- heap reports: output plumbing and the format dispatcher. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sized.h"
#include "heap/heap.h"

static void drain(struct heap_out *o)
{
	if (o->len && !o->err) {
		int rc = o->write(o->arg, o->buf, o->len);
		if (rc)
			o->err = rc < 0 ? rc : -EIO;
	}
	o->len = 0;
}

void heap_out_write(struct heap_out *o, const void *p, size_t n)
{
	while (n) {
		size_t k = sizeof(o->buf) - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, p, k);
		o->len += k;
		p = (const char *)p + k;
		n -= k;
		if (o->len == sizeof(o->buf))
			drain(o);
	}
}

void heap_out_printf(struct heap_out *o, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(line)) {
		heap_out_write(o, line, (size_t)n);
		return;
	}
	/* Rare: a long name.  Format again into the heap rather than truncate it. */
	{
		char *big = NULL;
		va_start(ap, fmt);
		n = vasprintf(&big, fmt, ap);
		va_end(ap);
		if (n >= 0)
			heap_out_write(o, big, (size_t)n);
		else
			o->err = -ENOMEM;
		free(big);
	}
}

int heap_out_flush(struct heap_out *o)
{
	drain(o);
	return o->err;
}

int jma_heap_report(jma_heap *h, const struct jma_heap_report_opts *opts, jma_write_fn write, void *arg)
{
	static int (*const formats[])(struct heap_view *, struct heap_out *) = {
		heap_text, heap_json, heap_collapsed, heap_pprof,
	};
	struct jma_heap_report_opts in, *o = &in;
	struct heap_view v;
	struct heap_out *out;
	int err;

	if ((err = SIZED_IN(opts, &in)))
		return heap_fail(h, err, "report: its options' sz is not that of a "
				 "struct jma_heap_report_opts this library knows");
	if ((unsigned)o->format >= 4 || (unsigned)o->sample >= 4)
		return heap_fail(h, -EINVAL, "unknown report format or sample type");
	out = calloc(1, sizeof(*out));
	if (!out)
		return heap_fail(h, -ENOMEM, "out of memory");
	out->write = write;
	out->arg = arg;
	err = heap_view_build(h, o, &v);
	if (!err) {
		err = formats[o->format](&v, out);
		heap_view_free(&v);
	}
	if (!err) {
		err = heap_out_flush(out);
		if (err)
			heap_fail(h, err, "writing the report: %s", strerror(-err));
	}
	free(out);
	return err;
}

static int write_file(void *arg, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, arg) == len ? 0 : -(errno ? errno : EIO);
}

int jma_heap_report_file(jma_heap *h, const struct jma_heap_report_opts *o, FILE *f)
{
	return jma_heap_report(h, o, write_file, f);
}
