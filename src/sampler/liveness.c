/* liveness.c -- which sampled blocks are still allocated, read from jemalloc's own metadata.
 *
 * Probing every free costs a trap per call, which a busy server cannot
 * afford; the census reads the same answer from jemalloc's map of extents,
 * its slab bitmaps and the thread caches, once, at the end, for every
 * sampled block at a time.  Its error: a block freed and given out again to
 * another allocation of its size class before the end reads as still in
 * use (a thread cache gives the block freed last first).  Sampled returns
 * that find their pointer still followed (sampler.bpf.c) and a block too
 * small for what was sampled catch some of it; doc/sampler.md has the bias measured
 * against jemalloc's own profiler.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jemattach/census.h>

#include "core/session.h"
#include "sampler/liveness.h"

/* The census block starting at @addr, or NULL. */
static const struct jma_census_block *block_at(const struct jma_census *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nlist;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->list[mid].addr == addr)
			return &c->list[mid];
		if (c->list[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Could a block of usable size @usable be the allocation of @size bytes
 * sampled?  It holds them; it may have grown since (realloc in place: a
 * large block's extent expanded), so no upper bound. */
static int fits(uint64_t usable, uint64_t size)
{
	return usable >= size;
}

int smp_liveness_check(jma_session *s, struct smp_profile *p, uint64_t *checked, uint64_t *live,
		       char *why, size_t len)
{
	struct jma_census_opts o = { .flags = JMA_CENSUS_LIST };
	struct smp_unfreed *v = NULL;
	struct jma_census *c = NULL;
	size_t n;
	int err;

	*checked = *live = 0;
	if ((err = smp_profile_unfreed(p, &v, &n)))
		return err;
	if (!n) {
		free(v);
		return 0;
	}
	err = jma_census_run(s, &o, &c);
	if (err) {
		snprintf(why, len, "%s", jma_errmsg(s));
		free(v);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		const struct jma_census_block *b = block_at(c, v[i].ptr);

		if (b && fits(b->size, v[i].size))
			(*live)++;
		else
			smp_profile_freed(p, v[i].id);
	}
	*checked = n;
	jma_census_free(c);
	free(v);
	return 0;
}
