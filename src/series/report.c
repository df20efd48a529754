/* report.c -- the seed's three analyses of a series (abs, del, eff), and sizes for people. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "series/report.h"

static const char *const metric_names[JMA_M_COUNT] = {
	"allocated", "active", "mapped", "dirty", "muzzy", "retained", "resident",
};

int jma_metric_parse(const char *name, enum jma_metric *m)
{
	if (!strcmp(name, "total")) {
		*m = JMA_M_ALLOCATED;
		return 0;
	}
	for (int i = 0; i < JMA_M_COUNT; i++)
		if (!strcmp(name, metric_names[i])) {
			*m = (enum jma_metric)i;
			return 0;
		}
	return -EINVAL;
}

const char *jma_metric_name(enum jma_metric m)
{
	return m < JMA_M_COUNT ? metric_names[m] : "?";
}

static const struct jma_arena_sample *find_arena(const struct jma_sample *smp, int arena)
{
	for (size_t i = 0; i < smp->narenas; i++)
		if ((int)smp->arenas[i].index == arena)
			return &smp->arenas[i];
	return NULL;
}

int jma_sample_metric(const struct jma_sample *smp, int arena, enum jma_metric m, uint64_t *v)
{
	const struct jma_arena_sample *a;

	if (arena == JMA_ARENA_ALL) {
		const uint64_t all[JMA_M_COUNT] = { smp->allocated, smp->active, smp->mapped,
						    smp->dirty, smp->muzzy, smp->retained,
						    smp->resident };
		*v = m < JMA_M_COUNT ? all[m] : 0;
		return 0;
	}
	a = find_arena(smp, arena);
	if (!a)
		return -ENOENT;
	{
		const uint64_t one[JMA_M_COUNT] = { a->small_allocated + a->large_allocated,
						    a->active, a->mapped, a->dirty, a->muzzy,
						    a->retained, a->resident };
		*v = m < JMA_M_COUNT ? one[m] : 0;
	}
	return 0;
}

void jma_format_size(int64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = bytes < 0 ? -(double)bytes : (double)bytes;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, len, "%lld B", (long long)bytes);
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%s%.1f %s", bytes < 0 ? "-" : "", v, unit[u]);
}

int jma_parse_size(const char *text, uint64_t *bytes)
{
	static const struct { const char *sfx[3]; int shift; } units[] = {
		{ { "B", NULL, NULL }, 0 },
		{ { "K", "KB", "KIB" }, 10 },
		{ { "M", "MB", "MIB" }, 20 },
		{ { "G", "GB", "GIB" }, 30 },
		{ { "T", "TB", "TIB" }, 40 },
	};
	char *end;
	double v;
	int shift = -1;

	if (!isdigit((unsigned char)*text) && *text != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || !isfinite(v))
		return -EINVAL;
	if (!*end)
		shift = 20;	/* the seed's unit */
	for (size_t i = 0; i < sizeof(units) / sizeof(*units) && shift < 0; i++)
		for (int k = 0; k < 3 && units[i].sfx[k]; k++)
			if (!strcasecmp(end, units[i].sfx[k]))
				shift = units[i].shift;
	if (shift < 0)
		return -EINVAL;
	v *= (double)(1ULL << shift);
	if (v >= 0x1p63)
		return -ERANGE;
	*bytes = (uint64_t)(v + 0.5);
	return 0;
}

int report_range(const struct jma_series *ser, unsigned *from, unsigned *to)
{
	if (!ser->n || *from >= ser->n || *from > *to)
		return -ERANGE;
	if (*to >= ser->n)
		*to = (unsigned)(ser->n - 1);
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int report_arenas(const struct jma_series *ser, unsigned from, unsigned to, int **out, size_t *n)
{
	size_t cap = 1, k = 1;
	int *v;

	for (unsigned i = from; i <= to; i++)
		cap += ser->v[i].narenas;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[0] = JMA_ARENA_ALL;
	for (unsigned i = from; i <= to; i++)
		for (size_t j = 0; j < ser->v[i].narenas; j++)
			v[k++] = (int)ser->v[i].arenas[j].index;
	qsort(v + 1, k - 1, sizeof(*v), cmp_int);
	*n = k > 1 ? 2 : 1;
	for (size_t j = 2; j < k; j++)
		if (v[j] != v[*n - 1])
			v[(*n)++] = v[j];
	*out = v;
	return 0;
}

int report_peak(const struct jma_series *ser, int arena, enum jma_metric m, unsigned from,
		unsigned to, uint64_t *peak, unsigned *at)
{
	int found = 0;

	*peak = 0;
	*at = from;
	for (unsigned i = from; i <= to; i++) {
		uint64_t v;

		if (jma_sample_metric(&ser->v[i], arena, m, &v))
			continue;
		if (!found || v > *peak) {
			*peak = v;
			*at = i;
		}
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

static int cmp_abs(const void *a, const void *b)
{
	const struct jma_abs_row *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return cmp_int(&x->arena, &y->arena);
}

int jma_report_abs(const struct jma_series *ser, enum jma_metric m, uint64_t threshold,
		   unsigned from, unsigned to, struct jma_abs_row **rows, size_t *n)
{
	int *arenas, err = report_range(ser, &from, &to);
	size_t na;

	*rows = NULL;
	*n = 0;
	if (err || (err = report_arenas(ser, from, to, &arenas, &na)))
		return err;
	*rows = calloc(na, sizeof(**rows));
	if (!*rows) {
		free(arenas);
		return -ENOMEM;
	}
	for (size_t a = 0; a < na; a++) {
		struct jma_abs_row *r = &(*rows)[*n];

		if (report_peak(ser, arenas[a], m, from, to, &r->value, &r->iter) == 0 &&
		    r->value >= threshold) {
			r->arena = arenas[a];
			(*n)++;
		}
	}
	free(arenas);
	qsort(*rows, *n, sizeof(**rows), cmp_abs);
	return 0;
}

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int cmp_del(const void *a, const void *b)
{
	const struct jma_del_row *x = a, *y = b;
	uint64_t mx = magnitude(x->change), my = magnitude(y->change);

	if (mx != my)
		return mx < my ? 1 : -1;
	if (x->iter != y->iter)
		return x->iter < y->iter ? -1 : 1;
	return cmp_int(&x->arena, &y->arena);
}

int jma_report_del(const struct jma_series *ser, enum jma_metric m, uint64_t threshold,
		   unsigned from, unsigned to, struct jma_del_row **rows, size_t *n)
{
	int *arenas, err = report_range(ser, &from, &to);
	size_t na, cap = 0;

	*rows = NULL;
	*n = 0;
	if (err || (err = report_arenas(ser, from, to, &arenas, &na)))
		return err;
	for (size_t a = 0; a < na && !err; a++) {
		for (unsigned i = from + 1; i <= to; i++) {
			struct jma_del_row r = { .arena = arenas[a], .iter = i };

			/* Absent: the arena did not exist yet (or any more): 0. */
			if (jma_sample_metric(&ser->v[i - 1], r.arena, m, &r.before))
				r.before = 0;
			if (jma_sample_metric(&ser->v[i], r.arena, m, &r.after))
				r.after = 0;
			r.change = (int64_t)(r.after - r.before);
			if (r.change == 0 || magnitude(r.change) < threshold)
				continue;
			if (*n == cap) {
				struct jma_del_row *v = realloc(*rows, (cap = cap * 2 + 16) * sizeof(*v));
				if (!v) {
					err = -ENOMEM;
					break;
				}
				*rows = v;
			}
			(*rows)[(*n)++] = r;
		}
	}
	free(arenas);
	if (err) {
		free(*rows);
		*rows = NULL;
		*n = 0;
		return err;
	}
	if (*n)
		qsort(*rows, *n, sizeof(**rows), cmp_del);
	return 0;
}

int jma_report_eff(const struct jma_series *ser, uint64_t threshold, unsigned from, unsigned to,
		   struct jma_eff *out)
{
	int *arenas, err = report_range(ser, &from, &to);
	size_t na;

	memset(out, 0, sizeof(*out));
	if (err || (err = report_arenas(ser, from, to, &arenas, &na)))
		return err;
	out->arenas = arenas;
	for (size_t a = 0; a < na; a++) {
		uint64_t peak;
		unsigned at;

		if (report_peak(ser, arenas[a], JMA_M_MAPPED, from, to, &peak, &at) == 0 &&
		    peak >= threshold && peak > 0)
			arenas[out->narenas++] = arenas[a];
	}
	out->from = from;
	out->niters = to - from + 1;
	out->ratio = malloc((out->niters * out->narenas + 1) * sizeof(*out->ratio));
	if (!out->ratio) {
		jma_eff_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < out->niters; i++)
		for (size_t a = 0; a < out->narenas; a++) {
			const struct jma_sample *smp = &ser->v[from + i];
			uint64_t act, map;

			if (jma_sample_metric(smp, arenas[a], JMA_M_ACTIVE, &act) ||
			    jma_sample_metric(smp, arenas[a], JMA_M_MAPPED, &map) || !map)
				out->ratio[i * out->narenas + a] = NAN;
			else
				out->ratio[i * out->narenas + a] = (double)act / (double)map;
		}
	return 0;
}

void jma_eff_free(struct jma_eff *e)
{
	free(e->arenas);
	free(e->ratio);
	memset(e, 0, sizeof(*e));
}
