/* json.c -- the JSON report: the profile's identity, the total, the
 * sites (as in the text report) and the largest stacks with every frame, so
 * that scripts need not parse text.  Values are in the sample's unit (bytes
 * or objects), rounded to integers.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "heap/heap.h"

static void str(struct heap_out *o, const char *s)
{
	heap_out_write(o, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			char esc[2] = { '\\', (char)*p };
			heap_out_write(o, esc, 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			heap_out_printf(o, "\\u%04x", *p);
		} else {
			heap_out_write(o, p, 1);
		}
	}
	heap_out_write(o, "\"", 1);
}

static void str_or_null(struct heap_out *o, const jma_heap *h, uint32_t id)
{
	if (id)
		str(o, h->str.str[id]);
	else
		heap_out_write(o, "null", 4);
}

static double pct(double x, double total)
{
	return total != 0 ? x * 100.0 / total : 0;
}

static void module_field(struct heap_out *o, const jma_heap *h, int32_t module)
{
	heap_out_printf(o, ", \"module\": ");
	str_or_null(o, h, module >= 0 ? h->modules[module].path : 0);
}

/* How a site got its name (enum heap_named). */
static const char *const named_names[] = { "address", "boundary", "symbol" };

static void sites(struct heap_view *v, struct heap_out *o)
{
	jma_heap *h = v->h;
	size_t n = v->o->top && v->o->top < v->nsites ? v->o->top : v->nsites;

	heap_out_printf(o, ",\n \"sites\": [");
	for (size_t i = 0; i < n; i++) {
		const struct heap_vsite *s = &v->sites[i];

		uint32_t name = heap_view_label_as(v, &s->fr, s->fr.func);

		/* Names as the symbol table spells them, and demangled beside:
		 * scripts match either. */
		heap_out_printf(o, "%s\n  {\"name\": ", i ? "," : "");
		str(o, name == UINT32_MAX ? "" : h->str.str[name]);
		heap_out_printf(o, ", \"function\": ");
		str(o, h->str.str[s->fr.func]);
		heap_out_printf(o, ", \"demangled\": ");
		str(o, h->str.str[s->fr.dfunc]);
		heap_out_printf(o, ", \"file\": ");
		str_or_null(o, h, s->fr.file);
		heap_out_printf(o, ", \"line\": %d", s->fr.line);
		module_field(o, h, s->module);
		heap_out_printf(o, ", \"named\": \"%s\"", named_names[s->named]);
		heap_out_printf(o, ", \"flat\": %.0f, \"flat_pct\": %.2f, \"cum\": %.0f, \"cum_pct\": %.2f}",
				round(s->flat), pct(s->flat, v->total), round(s->cum), pct(s->cum, v->total));
	}
	heap_out_printf(o, "\n ]");
}

static int cmp_value(const void *a, const void *b)
{
	double x = fabs(((const struct heap_vstack *)a)->value);
	double y = fabs(((const struct heap_vstack *)b)->value);
	return (x < y) - (x > y);
}

static int stacks(struct heap_view *v, struct heap_out *o)
{
	const jma_heap *h = v->h;
	size_t n = v->o->top && v->o->top < v->nstacks ? v->o->top : v->nstacks;

	qsort(v->stacks, v->nstacks, sizeof(*v->stacks), cmp_value);
	heap_out_printf(o, ",\n \"stacks\": [");
	for (size_t i = 0; i < n; i++) {
		size_t nf;

		if (heap_view_frames(v, &v->stacks[i], &nf))
			return heap_fail(v->h, -ENOMEM, "out of memory");
		heap_out_printf(o, "%s\n  {\"value\": %.0f, \"frames\": [", i ? "," : "",
				round(v->stacks[i].value));
		for (size_t k = 0; k < nf; k++) {
			const struct heap_frame *f = &v->fr[k];
			const struct heap_loc *l = &h->locs[v->fr_loc[k]];

			heap_out_printf(o, "%s\n    {\"function\": ", k ? "," : "");
			str(o, h->str.str[f->func]);
			heap_out_printf(o, ", \"demangled\": ");
			str(o, h->str.str[f->dfunc]);
			heap_out_printf(o, ", \"file\": ");
			str_or_null(o, h, f->file);
			heap_out_printf(o, ", \"line\": %d", f->line);
			module_field(o, h, l->module);
			heap_out_printf(o, ", \"address\": \"0x%llx\", \"inline\": %s}",
					(unsigned long long)l->addr,
					k + 1 < nf && v->fr_loc[k + 1] == v->fr_loc[k] ? "true" : "false");
		}
		heap_out_printf(o, "]}");
	}
	heap_out_printf(o, "\n ]");
	return 0;
}

int heap_json(struct heap_view *v, struct heap_out *o)
{
	const jma_heap *h = v->h;
	int objs = v->o->sample == JMA_HEAP_INUSE_OBJECTS || v->o->sample == JMA_HEAP_ALLOC_OBJECTS;

	heap_out_printf(o, "{\"version\": %d, \"period\": %llu, \"diff\": %s, \"symbolized\": %s, "
			"\"sample\": \"%s\", \"unit\": \"%s\", \"total\": %.0f, \"unnamed\": %.0f",
			h->version, (unsigned long long)h->period, h->is_diff ? "true" : "false",
			h->symbolized ? "true" : "false", jma_heap_sample_name(v->o->sample),
			objs ? "objects" : "bytes", round(v->total), round(v->unnamed));
	sites(v, o);
	if (stacks(v, o))
		return -ENOMEM;
	heap_out_printf(o, "\n}\n");
	return 0;
}
