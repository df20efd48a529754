/* ranges.c -- sorted sets of address ranges (see ranges.h). */
#include <errno.h>
#include <stdlib.h>

#include "symbols/ranges.h"

int syms_ranges_add(struct jma_range **v, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct jma_range *t = realloc(*v, ncap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		*v = t;
		*cap = ncap;
	}
	(*v)[*n].lo = lo;
	(*v)[*n].hi = hi > lo ? hi : lo + 1;
	(*n)++;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct jma_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

void syms_ranges_merge(struct jma_range *v, size_t *n, uint64_t gap)
{
	size_t w = 0;

	if (!*n)
		return;
	qsort(v, *n, sizeof(*v), cmp_range);
	for (size_t i = 0; i < *n; i++) {
		if (w && v[i].lo <= v[w - 1].hi + gap) {
			if (v[i].hi > v[w - 1].hi)
				v[w - 1].hi = v[i].hi;
		} else {
			v[w++] = v[i];
		}
	}
	*n = w;
}

int syms_ranges_has(const struct jma_range *v, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < v[mid].lo)
			hi = mid;
		else if (pc >= v[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}
