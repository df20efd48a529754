/* stacks.c -- the stacks of cached pointers every thread cache claims (5.x's
 * bins in tcache.c, 3.6's and 4.5's in chunktcache.c, a quarantine's ring),
 * copied into one sorted list of thread-cached blocks under one rule: a
 * stack is believed only as far as its capacity and one readable mapping
 * hold it, and no two overlap (each byte of the target's copied once);
 * and the blocks those stacks live in, jemalloc's own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define CHUNK_ITEMS	512	/* items read at a time; the deadline checked between */

/* The bytes of a stack of @n items. */
static uint64_t stack_len(uint64_t n, unsigned flags)
{
	return n * (flags & CEN_STACK_RING ? 16 : 8);
}

int cen_stack_claim(struct cen *c, struct cen_stacks *st, uint64_t at, uint64_t n, uint64_t max,
		    unsigned flags)
{
	const struct att_map *m;

	if (!n)
		return 0;
	m = cen_ptr_ok(at) ? att_maps_find(c->maps, c->nmaps, at) : NULL;
	if (n > max || (at & 7) || !m || m->perms[0] != 'r' || stack_len(n, flags) > m->end - at) {
		st->rejected++;
		return 0;
	}
	if (cen_grow(&st->v, &st->cap, st->n + 1, sizeof(*st->v)))
		return -ENOMEM;
	st->v[st->n++] = (struct bin_stack){ at, (uint32_t)n, flags };
	return 0;
}

static int add(struct cen *c, uint64_t v)
{
	if (cen_grow(&c->cached, &c->capcached, c->ncached + 1, sizeof(*c->cached)))
		return -ENOMEM;
	c->cached[c->ncached++] = v;
	return 0;
}

/* The items of stack @b into the cached list (a ring's: counted apart too). */
static int copy_items(struct cen *c, const struct bin_stack *b)
{
	uint64_t items[CHUNK_ITEMS], at = b->at, n = b->n;
	unsigned w = b->flags & CEN_STACK_RING ? 2 : 1;

	while (n) {
		size_t k = n < CHUNK_ITEMS / w ? (size_t)n : CHUNK_ITEMS / w;
		if (cen_timed_out(c))
			return -ETIMEDOUT;
		if (cen_read(c, at, items, stack_len(k, b->flags)))
			return 0;	/* unreadable: counted by the stats.allocated check */
		for (size_t i = 0; i < k; i++) {
			uint64_t p = items[i * w];
			if (!cen_ptr_ok(p) || (p & 7))
				continue;
			if (add(c, p | (b->flags & CEN_STACK_EXPLICIT)))
				return -ENOMEM;
			if (w == 2) {
				c->quarantined++;
				c->quarantined_bytes += items[i * w + 1];
			}
		}
		at += stack_len(k, b->flags);
		n -= k;
	}
	return 0;
}

/* The stack array a bin's pointer @p falls in: one record per tcache is
 * enough (all its bins share one allocation), more do no harm. */
int cen_stack_add(struct cen *c, uint64_t p)
{
	if (!cen_ptr_ok(p) || (c->nstacks && c->stacks[c->nstacks - 1] == p))
		return 0;
	if (cen_grow(&c->stacks, &c->capstacks, c->nstacks + 1, sizeof(*c->stacks)))
		return -ENOMEM;
	c->stacks[c->nstacks++] = p;
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct bin_stack *x = a, *y = b;
	return (x->at > y->at) - (x->at < y->at);
}

/* Copy the stacks claimed, but none that overlaps another: each byte of
 * the target's memory is copied at most once. */
int cen_stacks_copy(struct cen *c, struct cen_stacks *st)
{
	uint64_t end = 0;
	int err = 0;

	if (st->n)
		qsort(st->v, st->n, sizeof(*st->v), cmp_stack);
	for (size_t i = 0; i < st->n && !err; i++) {
		const struct bin_stack *b = &st->v[i];
		uint64_t len = stack_len(b->n, b->flags);

		if (b->at < end || (i + 1 < st->n && st->v[i + 1].at < b->at + len)) {
			st->rejected++;
			if (b->at + len > end)
				end = b->at + len;
			continue;
		}
		end = b->at + len;
		err = copy_items(c, b);
	}
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a & ~1ULL, y = *(const uint64_t *)b & ~1ULL;
	return x < y ? -1 : x > y;
}

void cen_tcache_sort(struct cen *c)
{
	if (c->ncached)
		qsort(c->cached, c->ncached, sizeof(*c->cached), cmp_u64);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int cen_stacks_index(struct cen *c)
{
	if (!(c->stack_ids = malloc((c->nstacks ? c->nstacks : 1) * sizeof(*c->stack_ids))))
		return -ENOMEM;
	for (size_t i = 0; i < c->nstacks; i++) {
		long b = cen_block_of(&c->ix, c->stacks[i]);
		if (b >= 0)
			c->stack_ids[c->nstack_ids++] = (uint32_t)b;
	}
	qsort(c->stack_ids, c->nstack_ids, sizeof(*c->stack_ids), cmp_u32);
	return 0;
}

int cen_is_stack(const struct cen *c, size_t b)
{
	uint32_t k = (uint32_t)b;

	return c->nstack_ids && bsearch(&k, c->stack_ids, c->nstack_ids, sizeof(k), cmp_u32);
}

size_t cen_cached_from(const struct cen *c, uint64_t addr)
{
	size_t lo = 0, hi = c->ncached;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((c->cached[mid] & ~1ULL) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cen_is_cached(const struct cen *c, uint64_t addr)
{
	size_t k = cen_cached_from(c, addr);

	if (k < c->ncached && (c->cached[k] & ~1ULL) == addr)
		return 1 + (int)(c->cached[k] & 1);
	return 0;
}
