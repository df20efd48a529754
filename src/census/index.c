/* index.c -- the live blocks, numbered by address in about a bit each: runs of equal blocks and a bitmap.
 *
 * Blocks come in address order (walk.c).  A run is a stretch of memory cut
 * into positions of one size -- a slab's regions, and the slabs of its class
 * that follow it with no gap -- and a bit per position says whether a live
 * block is there.  Each 64-bit word of that bitmap carries the number of
 * live blocks before it (its rank), so a block's number is its word's rank
 * plus the bits before it.  A slab of 8-byte blocks costs 64 bytes of bits
 * and 32 of ranks, plus a run of 32 when it does not continue the previous
 * one; a large block costs a run and a word (44 bytes).  Before: 16 bytes
 * per block (address and size), 24 with the capacity doubling leaves.
 *
 * A block may also have slack: jemalloc 4.x puts a large block (and a prof
 * sample promoted to a run of its own) somewhere in its run's first page
 * and records nowhere where (chunks.c), so it is listed at that page and
 * its bytes may be anywhere in [addr, addr + slack + size).  Such a block
 * is a run of its own, and every address of that span finds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "census/census.h"

#define GAP_MAX	64	/* free positions a run bridges (a slab's free tail, its neighbour's head) */

static struct cen_run *last_run(struct cen_index *c)
{
	return c->nruns ? &c->runs[c->nruns - 1] : NULL;
}

static int new_word(struct cen_index *c)
{
	size_t cap = c->capwords;

	if (cen_grow(&c->ibits, &cap, c->nwords + 1, sizeof(*c->ibits)) ||
	    cen_grow(&c->irank, &c->capwords, c->nwords + 1, sizeof(*c->irank)))
		return -ENOMEM;
	c->ibits[c->nwords] = 0;
	c->irank[c->nwords++] = (uint32_t)c->nblocks;
	return 0;
}

int cen_index_add(struct cen_index *c, uint64_t addr, uint64_t size, uint32_t slack)
{
	struct cen_run *r = last_run(c);
	uint64_t k;

	if (c->nblocks >= UINT32_MAX - 1)
		return -E2BIG;
	if (r && !slack && !r->slack && r->size == size && addr >= r->base + r->npos * size &&
	    (addr - r->base) % size == 0 && (k = (addr - r->base) / size) - r->npos < GAP_MAX &&
	    k < UINT32_MAX) {
		/* The words between the run's last and this position. */
		while (r->w0 + k / 64 >= c->nwords)
			if (new_word(c))
				return -ENOMEM;
	} else {
		if (cen_grow(&c->runs, &c->capruns, c->nruns + 1, sizeof(*c->runs)) || new_word(c))
			return -ENOMEM;
		r = &c->runs[c->nruns++];
		*r = (struct cen_run){ .base = addr, .size = size, .w0 = c->nwords - 1, .slack = slack };
		k = 0;
	}
	c->ibits[r->w0 + k / 64] |= 1ULL << (k % 64);
	r->npos = (uint32_t)k + 1;
	c->nblocks++;
	return 0;
}

void cen_index_free(struct cen_index *c)
{
	free(c->runs);
	free(c->ibits);
	free(c->irank);
	memset(c, 0, sizeof(*c));
}

long cen_block_of(const struct cen_index *c, uint64_t addr)
{
	size_t lo = 0, hi = c->nruns;
	const struct cen_run *r;
	uint64_t k, w, bits;

	/* The last run starting at or below @addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->runs[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	r = &c->runs[lo - 1];
	if (r->slack)	/* one block, its span */
		return addr - r->base < r->size + r->slack ? (long)c->irank[r->w0] : -1;
	k = (addr - r->base) / r->size;
	if (k >= r->npos)
		return -1;
	w = r->w0 + k / 64;
	bits = c->ibits[w];
	if (!(bits >> (k % 64) & 1))
		return -1;
	return (long)c->irank[w] + __builtin_popcountll(bits & ((1ULL << (k % 64)) - 1));
}

/* The run holding block @b. */
static const struct cen_run *run_of(const struct cen_index *c, size_t b)
{
	size_t lo = 0, hi = c->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->irank[c->runs[mid].w0] <= b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &c->runs[lo - 1];
}

const struct cen_run *cen_block_pos(const struct cen_index *c, size_t b, uint64_t *k)
{
	const struct cen_run *r = run_of(c, b);
	uint64_t lo = r->w0, hi = r->w0 + (r->npos + 63) / 64, bits;
	unsigned j;

	/* The word holding it: the last whose rank is at most @b. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (c->irank[mid] <= b)
			lo = mid;
		else
			hi = mid;
	}
	bits = c->ibits[lo];
	for (j = (unsigned)(b - c->irank[lo]); j; j--)
		bits &= bits - 1;	/* drop the lowest set bits before it */
	*k = (lo - r->w0) * 64 + (uint64_t)__builtin_ctzll(bits);
	return r;
}

void cen_block_at(const struct cen_index *c, size_t b, uint64_t *addr, uint64_t *size)
{
	uint64_t k;
	const struct cen_run *r = cen_block_pos(c, b, &k);

	*addr = r->base + k * r->size;
	*size = r->size;
}

uint64_t cen_block_addr(const struct cen_index *c, size_t b)
{
	uint64_t a, s;

	cen_block_at(c, b, &a, &s);
	return a;
}

uint64_t cen_block_size(const struct cen_index *c, size_t b)
{
	return run_of(c, b)->size;
}

uint64_t cen_block_span(const struct cen_index *c, size_t b)
{
	const struct cen_run *r = run_of(c, b);

	return r->size + r->slack;
}

uint64_t cen_index_end(const struct cen_index *c)
{
	const struct cen_run *r = c->nruns ? &c->runs[c->nruns - 1] : NULL;

	return r ? r->base + r->npos * r->size + r->slack : 0;
}

size_t cen_index_bytes(const struct cen_index *c)
{
	return c->capruns * sizeof(*c->runs) + c->capwords * (sizeof(*c->ibits) + sizeof(*c->irank));
}
