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

static int fits(uint64_t usable, uint64_t size);

static int by_ptr(const void *a, const void *b)
{
	const struct smp_unfreed *x = a, *y = b;

	return x->ptr < y->ptr ? -1 : x->ptr > y->ptr;
}

/* The unfreed sampled blocks @v[0..n), by address, against the census's
 * blocks (in address order too): which are still allocated, into @alive. */
static void match(const struct jma_census *c, const struct smp_unfreed *v, size_t n,
		  unsigned char *alive)
{
	struct jma_census_cursor k = { 0 };
	struct jma_census_block b;
	size_t i = 0;

	while (i < n && jma_census_next(c, &k, &b)) {
		while (i < n && v[i].ptr < b.addr)
			i++;
		for (size_t j = i; j < n && v[j].ptr == b.addr; j++)
			alive[j] = fits(b.size, v[j].size);
	}
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
	unsigned char *alive;
	size_t n;
	int err;

	*checked = *live = 0;
	if ((err = smp_profile_unfreed(p, &v, &n)))
		return err;
	if (!n) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), by_ptr);
	if (!(alive = calloc(n, 1))) {
		snprintf(why, len, "out of memory");
		free(v);
		return -ENOMEM;
	}
	err = jma_census_run(s, &o, &c);
	if (err) {
		snprintf(why, len, "%s", jma_errmsg(s));
		free(alive);
		free(v);
		return err;
	}
	match(c, v, n, alive);
	for (size_t i = 0; i < n; i++) {
		if (alive[i])
			(*live)++;
		else
			smp_profile_freed(p, v[i].id);
	}
	*checked = n;
	jma_census_free(c);
	free(alive);
	free(v);
	return 0;
}
