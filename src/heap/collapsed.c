/* collapsed.c -- "root;caller;...;leaf value" lines, the folded-stack
 * format of flamegraph.pl, inferno and speedscope.  Stacks that read the same
 * once named are merged; only positive values are written (the tools take no
 * negative counts: after --base that is the growth).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heap.h"

struct line {
	size_t off;		/* into the text buffer */
	double value;
};

struct lines {
	char *text;
	size_t len, cap;
	struct line *v;
	size_t n;
};

static int append(struct lines *L, const char *s, size_t n)
{
	if (L->len + n + 1 > L->cap) {
		size_t nc = L->cap ? L->cap : 1 << 16;
		char *t;
		while (nc < L->len + n + 1)
			nc *= 2;
		t = realloc(L->text, nc);
		if (!t)
			return -ENOMEM;
		L->text = t;
		L->cap = nc;
	}
	memcpy(L->text + L->len, s, n);
	L->len += n;
	L->text[L->len] = '\0';
	return 0;
}

/* A frame name, with the two characters the format reserves replaced. */
static int append_frame(struct lines *L, const char *s)
{
	size_t start = L->len;

	if (append(L, s, strlen(s)))
		return -ENOMEM;
	for (char *p = L->text + start; *p; p++)
		if (*p == ';' || *p == '\n')
			*p = '_';
	return 0;
}

static int cmp_line(const void *a, const void *b, void *text)
{
	return strcmp((const char *)text + ((const struct line *)a)->off,
		      (const char *)text + ((const struct line *)b)->off);
}

static int build(struct heap_view *v, struct lines *L)
{
	L->v = malloc((v->nstacks ? v->nstacks : 1) * sizeof(*L->v));
	if (!L->v)
		return -ENOMEM;
	for (size_t i = 0; i < v->nstacks; i++) {
		size_t nf, off = L->len;

		if (!(v->stacks[i].value > 0))
			continue;
		if (heap_view_frames(v, &v->stacks[i], &nf))
			return -ENOMEM;
		if (!nf)
			continue;
		for (size_t k = nf; k-- > 0;) {
			uint32_t label = heap_view_label(v, &v->fr[k]);
			if (label == UINT32_MAX || append_frame(L, v->h->str.str[label]) ||
			    (k && append(L, ";", 1)))
				return -ENOMEM;
		}
		/* The NUL stays in the buffer: each line is its own string. */
		if (append(L, "", 1))
			return -ENOMEM;
		L->v[L->n].off = off;
		L->v[L->n].value = v->stacks[i].value;
		L->n++;
	}
	return 0;
}

int heap_collapsed(struct heap_view *v, struct heap_out *o)
{
	struct lines L = { 0 };
	int err = build(v, &L);

	if (!err && L.n) {
		qsort_r(L.v, L.n, sizeof(*L.v), cmp_line, L.text);
		for (size_t i = 0; i < L.n;) {
			double sum = 0;
			size_t j = i;
			for (; j < L.n && !strcmp(L.text + L.v[j].off, L.text + L.v[i].off); j++)
				sum += L.v[j].value;
			if (round(sum) >= 1)
				heap_out_printf(o, "%s %.0f\n", L.text + L.v[i].off, round(sum));
			i = j;
		}
	}
	free(L.text);
	free(L.v);
	return err ? heap_fail(v->h, err, "out of memory") : 0;
}
