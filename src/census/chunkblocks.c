/* chunkblocks.c -- the census of jemalloc 3.6 and 4.5, running: the runs copied in the stop
 * (chunks.c) expanded into blocks.
 *
 * Stopped, the maps, run headers and bitmaps are copied (chk_run records);
 * running, they are expanded into blocks, in address order, into index.c's
 * index as walk.c's are.  4.x does not record where in its first page a
 * large block starts (arena_malloc_large adds a random multiple of the
 * cache line and forgets it): such a block is listed at its run's first
 * page unless a thread cache holds it (which has its pointer), with that
 * page as its slack in the index (found by any address it may have, read
 * whole).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "census/chunks.h"

/* The by-size table, ascending: @n blocks of @usize. */
static int count_size(struct cen_chunks *k, uint64_t usize, uint64_t n)
{
	size_t lo = 0, hi = k->nsizes;

	if (!n)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->bysize[mid].size < usize)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == k->nsizes || k->bysize[lo].size != usize) {
		if (cen_grow(&k->bysize, &k->capsizes, k->nsizes + 1, sizeof(*k->bysize)))
			return -ENOMEM;
		memmove(&k->bysize[lo + 1], &k->bysize[lo], (k->nsizes - lo) * sizeof(*k->bysize));
		k->bysize[lo] = (struct jma_census_size){ .size = usize };
		k->nsizes++;
	}
	k->bysize[lo].blocks += n;
	k->bysize[lo].bytes += n * usize;
	return 0;
}

static int small_blocks(struct cen *c, const struct chk_run *r)
{
	const struct chk_bin *b = &c->ch->bins[r->binind];
	const uint64_t *bitmap = c->bits + r->bits;
	uint64_t nfree = 0, live = 0;
	size_t q = cen_cached_from(c, r->base);
	int err = 0;

	for (uint32_t i = 0; i < b->nregs && !err; i++) {
		uint64_t a = r->base + b->reg0 + i * b->reg_interval;
		int how = 0;

		if (bitmap[i / 64] >> (i % 64) & 1) {
			nfree++;
			continue;
		}
		while (q < c->ncached && (c->cached[q] & ~1ULL) < a)
			q++;
		if (q < c->ncached && (c->cached[q] & ~1ULL) == a)
			how = 1 + (int)(c->cached[q] & 1);
		live += !how;
		err = cen_add_block(c, CEN_NSIZES_MAX, a, b->reg_size, 0, how);
	}
	if (nfree != r->nfree)
		c->bad_nfree++;
	return err ? err : count_size(c->ch, b->reg_size, live);
}

/* A large run's block: 4.x's starts in the run's first page at a multiple
 * of the cache line, known only to a thread cache that holds it; else it
 * is listed at that page, the page its slack. */
static int large_block(struct cen *c, const struct chk_run *r)
{
	struct cen_chunks *k = c->ch;
	uint64_t addr = r->base;
	size_t q = cen_cached_from(c, r->base);
	uint32_t slack = 0;
	int how = 0;

	if (q < c->ncached && (c->cached[q] & ~1ULL) < r->base + (k->large_pad ? k->large_pad : 1)) {
		addr = c->cached[q] & ~1ULL;
		how = 1 + (int)(c->cached[q] & 1);
	} else if (k->large_pad && r->kind == CHK_LARGE) {
		k->large_paged++;
		slack = (uint32_t)k->large_pad;
	}
	/* A promoted prof sample: jemalloc's statistics count its run (less
	 * the pad), malloc_usable_size its small class. */
	if (r->kind == CHK_LARGE && r->usize + k->large_pad < r->size) {
		k->promoted++;
		k->promoted_extra += r->size - k->large_pad - r->usize;
	}
	if (!how && count_size(k, r->usize, 1))
		return -ENOMEM;
	return cen_add_block(c, CEN_NSIZES_MAX, addr, r->usize, slack, how);
}

/* What the output should say of this census's own limits. */
static void notes(struct cen *c)
{
	struct cen_chunks *k = c->ch;

	if (c->quarantined)
		cen_warn(c, "%llu of the thread-cached blocks (%llu bytes) are in quarantine "
			 "(opt.quarantine)", (unsigned long long)c->quarantined,
			 (unsigned long long)c->quarantined_bytes);
	if (k->promoted)
		cen_warn(c, "%llu blocks are prof samples in runs of their own, which "
			 "stats.allocated counts whole: %llu bytes more than their usable sizes",
			 (unsigned long long)k->promoted, (unsigned long long)k->promoted_extra);
	if (k->large_paged)
		cen_warn(c, "%llu large blocks are listed at their run's first page: jemalloc %u.%u "
			 "does not record where in it (a multiple of 64 bytes) each starts",
			 (unsigned long long)k->large_paged, k->L->major, k->L->minor);
}

/* The runs the last walk copied, in address order: their blocks into the
 * index, counted by usable size.  Again for a second stop's walk (leaks.c):
 * its counts start afresh. */
int cen_chunks_expand(struct cen *c)
{
	struct cen_chunks *k = c->ch;
	int err = 0;

	k->nsizes = 0;
	k->large_paged = k->promoted = k->promoted_extra = 0;
	for (size_t i = 0; i < k->nruns && !err; i++) {
		const struct chk_run *r = &k->runs[i];

		err = r->kind == CHK_SMALL ? small_blocks(c, r) : large_block(c, r);
		cen_add_extent(c, r->size, r->kind == CHK_SMALL);
	}
	if (err == -E2BIG)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: more than %u blocks", UINT32_MAX - 2);
	if (err)
		return sess_fail(c->s, JMA_ERR_TARGET, err, "census: out of memory after %zu blocks",
				c->ix.nblocks);
	sess_logf(c->s, JMA_LOG_INFO, "census: %llu arena chunks, %llu huge allocations, %zu runs",
		 (unsigned long long)k->nchunks, (unsigned long long)k->nhuge, k->nruns);
	return 0;
}

int cen_chunks_result(struct cen *c)
{
	struct cen_chunks *k = c->ch;
	struct jma_census *o = c->out;
	int err;

	if (!(o->sizes = calloc(k->nsizes ? k->nsizes : 1, sizeof(*o->sizes))))
		return sess_fail(c->s, JMA_ERR_TARGET, -ENOMEM, "out of memory");
	if (k->nsizes)
		memcpy(o->sizes, k->bysize, k->nsizes * sizeof(*o->sizes));
	o->nsizes = k->nsizes;
	notes(c);
	if ((err = cen_chunks_own(c)))
		return err;
	/* 3.6: the scan against the arenas' own count (none: --disable-stats). */
	if (k->counted) {
		size_t len = strlen(o->map_how);
		snprintf(o->map_how + len, sizeof(o->map_how) - len, k->counted == k->nchunks ?
			 "; %llu arena chunks, all the arenas count" : "; %llu arena chunks of the "
			 "%llu the arenas count", (unsigned long long)k->nchunks,
			 (unsigned long long)k->counted);
	}
	return 0;
}

int cen_chunks_run_at(const struct cen *c, size_t i, uint64_t *base, uint64_t *size)
{
	const struct cen_chunks *k = c->ch;

	if (i >= k->nruns)
		return 0;
	*base = k->runs[i].base;
	*size = k->runs[i].size;
	return 1;
}
