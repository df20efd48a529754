/* text.c -- the text report, in jeprof --text's columns so that people
 * and scripts used to jeprof read it as they are:
 *   Total: 72.2 MB
 *       64.0  88.6%  88.6%     64.0  88.6% keep_big
 * flat (allocated by the site itself), flat%, running sum%, cum (allocated
 * under it), cum%; space in MB (MiB, one decimal), objects as integers.
 */
#include <math.h>
#include <stdio.h>

#include "heap/heap.h"

static int is_objects(const struct heap_view *v)
{
	return v->o->sample == JMA_HEAP_INUSE_OBJECTS || v->o->sample == JMA_HEAP_ALLOC_OBJECTS;
}

static const char *unparse(const struct heap_view *v, double x, char *buf, size_t len)
{
	if (is_objects(v))
		snprintf(buf, len, "%.0f", trunc(x));
	else
		snprintf(buf, len, "%.1f", x / 1048576.0);
	return buf;
}

/* A share of @total; "-" when the total is 0 (a --base difference whose
 * growth and shrinkage cancel out), where no share means anything. */
static const char *percent(double x, double total, char *buf, size_t len)
{
	if (total != 0)
		snprintf(buf, len, "%.1f%%", x * 100.0 / total);
	else
		snprintf(buf, len, "-");
	return buf;
}

int heap_text(struct heap_view *v, struct heap_out *out)
{
	size_t n = v->o->top && v->o->top < v->nsites ? v->o->top : v->nsites;
	char a[64], b[64], c[64], d[64], e[64];
	double running = 0;

	heap_out_printf(out, "Total: %s %s\n", unparse(v, v->total, a, sizeof(a)),
			is_objects(v) ? "objects" : "MB");
	for (size_t i = 0; i < n; i++) {
		const struct heap_vsite *s = &v->sites[i];

		running += s->flat;
		heap_out_printf(out, "%8s %6s %6s %8s %6s %s\n", unparse(v, s->flat, a, sizeof(a)),
				percent(s->flat, v->total, b, sizeof(b)),
				percent(running, v->total, c, sizeof(c)),
				unparse(v, s->cum, d, sizeof(d)), percent(s->cum, v->total, e, sizeof(e)),
				v->h->str.str[s->label]);
	}
	return 0;
}
